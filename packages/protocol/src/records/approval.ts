import {
  array,
  type Infer,
  integer,
  json,
  named,
  nullable,
  object,
  oneOf,
  optional,
  string,
} from "../shape.ts";

/**
 * An approval's life: `pending` → `approved` | `denied`; approved → `applying` → `applied` |
 * `failed` | `unconfirmed` (the apply's outcome never came back); unconfirmed → `applying` again
 * only when a person retries, or `dismissed`.
 */
export const APPROVAL_STATUSES = [
  "pending",
  "approved",
  "denied",
  "applying",
  "applied",
  "failed",
  "unconfirmed",
  "dismissed",
] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const approvalFactShape = object({ label: string(), value: string() });

/** What `preview` returns: what the person sees. At most 20 facts. */
export const approvalCardShape = named(
  "ApprovalCard",
  object({
    title: string(),
    summary: optional(string()),
    facts: optional(array(approvalFactShape)),
  }),
);
export type ApprovalCard = Infer<typeof approvalCardShape>;

/** A person's decision; `id` is the idempotency key `apply` gets on every attempt. */
export const decisionShape = named(
  "Decision",
  object({ id: string(), decidedAt: string(), decidedBy: optional(string()) }),
);
export type Decision = Infer<typeof decisionShape>;

/** `GET /approvals/<id>`: one proposed write waiting for (or carrying) a decision. */
export const approvalViewShape = object({
  id: string(),
  sessionId: string(),
  turnId: string(),
  toolCallId: string(),
  agentId: string(),
  deploymentId: string(),
  tool: string(),
  /** The arguments on the card: exactly what `apply` receives. */
  input: json(),
  card: approvalCardShape,
  /** `sha256:` over the tool, input and card: what runs is what was shown. */
  digest: string(),
  status: oneOf(APPROVAL_STATUSES),
  decision: nullable(decisionShape),
  outcome: nullable(json()),
  error: nullable(string()),
  /** Times `apply` was started. */
  attempts: integer(),
  /** The runtime incarnation applying it, and since when (to tell a live apply from a lost one). */
  claimedBy: nullable(string()),
  claimedAt: nullable(string()),
  createdAt: string(),
  updatedAt: string(),
});
export type ApprovalView = Infer<typeof approvalViewShape>;
