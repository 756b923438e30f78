// Budgets per label value: what all sessions with one value of a label (e.g. each customer) may
// spend per UTC day or calendar month. Declared by the operator (`opencomputer/budgets.json`,
// or `createRuntime({ labelBudgets })`), read from the UsageStore when a turn starts, and
// enforced with the session's own budget (budget.ts).

import type { UsageStore } from "../ports/usage-store.ts";
import { InputError } from "./input.ts";

/** One label's budget: for every value of `label`, or only for `value` when it is given. */
export interface LabelBudget {
  label: string;
  value?: string;
  maxCostUsd?: number;
  maxTokens?: number;
  /** The period the limits are for: the current UTC day or calendar month. */
  period: "day" | "month";
}

export interface LabelBudgetOptions {
  usage: UsageStore;
  budgets: readonly LabelBudget[];
  /** The clock that says which day or month it is (tests give their own). */
  now?: () => number;
}

const LABEL_KEY = /^[a-z][a-z0-9_.-]{0,63}$/;

/**
 * Checks `budgets.json`'s `labels` object: `{ "<label>": {...}, "<label>=<value>": {...} }`,
 * each `{ maxCostUsd?, maxTokens?, period: "day" | "month" }`. Errors name the entry and field.
 */
export function checkLabelBudgets(raw: unknown, where: string): LabelBudget[] {
  const fail = (path: string, message: string): never => {
    throw new InputError("budgets_invalid", `${where}: ${path} ${message}`, { path });
  };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return fail("labels", "must be an object of label budgets");
  const out: LabelBudget[] = [];
  for (const [name, entry] of Object.entries(raw)) {
    const path = `labels.${name}`;
    const eq = name.indexOf("=");
    const label = eq === -1 ? name : name.slice(0, eq);
    if (!LABEL_KEY.test(label)) fail(path, `names a label key that does not match ${LABEL_KEY}`);
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      fail(path, "must be an object {maxCostUsd?, maxTokens?, period}");
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!["maxCostUsd", "maxTokens", "period"].includes(key))
        fail(`${path}.${key}`, "is not a field (allowed: maxCostUsd, maxTokens, period)");
    }
    if (e.period !== "day" && e.period !== "month")
      fail(`${path}.period`, 'must be "day" or "month"');
    const budget: LabelBudget = { label, period: e.period as "day" | "month" };
    if (eq !== -1) budget.value = name.slice(eq + 1);
    if (e.maxCostUsd !== undefined) {
      if (typeof e.maxCostUsd !== "number" || !(e.maxCostUsd > 0))
        fail(`${path}.maxCostUsd`, "must be a number greater than 0");
      budget.maxCostUsd = e.maxCostUsd as number;
    }
    if (e.maxTokens !== undefined) {
      if (!Number.isSafeInteger(e.maxTokens) || (e.maxTokens as number) <= 0)
        fail(`${path}.maxTokens`, "must be a whole number greater than 0");
      budget.maxTokens = e.maxTokens as number;
    }
    if (budget.maxCostUsd === undefined && budget.maxTokens === undefined)
      fail(path, "needs maxCostUsd or maxTokens");
    out.push(budget);
  }
  return out;
}

/**
 * The budgets that apply to a session with `labels`: per label key, the budget for its value
 * when there is one, else the budget for every value of that label.
 */
export function budgetsFor(
  budgets: readonly LabelBudget[],
  labels: Record<string, string>,
): Array<LabelBudget & { value: string }> {
  const out: Array<LabelBudget & { value: string }> = [];
  for (const [key, value] of Object.entries(labels)) {
    const exact = budgets.find((b) => b.label === key && b.value === value);
    const any = budgets.find((b) => b.label === key && b.value === undefined);
    const chosen = exact ?? any;
    if (chosen) out.push({ ...chosen, value });
  }
  return out;
}

/** The start of the UTC day or month `now` is in, and its end. */
export function periodOf(period: "day" | "month", now: number): { from: string; to: string } {
  const d = new Date(now);
  const start =
    period === "day"
      ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
      : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end =
    period === "day" ? start + 86_400_000 : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString() };
}
