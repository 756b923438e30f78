import {
  array,
  type Infer,
  integer,
  named,
  nullable,
  number,
  object,
  optional,
  string,
} from "../shape.ts";

/**
 * Sums of `usage.recorded` over some model steps. `costUsd` adds up the steps that had a price;
 * `unpricedSteps` counts those that did not (a model missing from the price table), so a total
 * never hides usage it could not price.
 */
export const usageTotalsShape = named(
  "UsageTotals",
  object({
    steps: integer(),
    /** Every input token, cached ones included (as `usage.recorded.inputTokens`). */
    inputTokens: integer(),
    outputTokens: integer(),
    cacheReadTokens: integer(),
    cacheWriteTokens: integer(),
    costUsd: number(),
    unpricedSteps: integer(),
  }),
);
export type UsageTotals = Infer<typeof usageTotalsShape>;

/** One group of a roll-up: `key` is the agent id, session id or label value (null: no label). */
export const usageGroupShape = object({
  key: nullable(string()),
  steps: integer(),
  inputTokens: integer(),
  outputTokens: integer(),
  cacheReadTokens: integer(),
  cacheWriteTokens: integer(),
  costUsd: number(),
  unpricedSteps: integer(),
});
export type UsageGroup = Infer<typeof usageGroupShape>;

/** `GET /usage`: the project's usage in [from, to), in total and per group. */
export const usageReportShape = object({
  from: string(),
  to: string(),
  /** `agent`, `session`, `label.<key>`; absent when the report has no groups. */
  groupBy: optional(string()),
  total: usageTotalsShape,
  groups: array(usageGroupShape),
});
export type UsageReport = Infer<typeof usageReportShape>;

/** What a session may spend (`POST /sessions {budget}`); a turn that exceeds it fails. */
export const budgetShape = named(
  "Budget",
  object({
    maxCostUsd: optional(number()),
    /** Input and output tokens together (cached input included). */
    maxTokens: optional(integer()),
  }),
);
export type Budget = Infer<typeof budgetShape>;
