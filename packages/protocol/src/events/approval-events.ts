import { approvalCardShape, decisionShape } from "../records/approval.ts";
import { integer, json, nullable, object, oneOf, string } from "../shape.ts";

const id = { approvalId: string() };

/** Tools that wait for a person: the proposal, the decision and the apply's honest outcome. */
export const approvalEvents = {
  "approval.requested": object({
    ...id,
    tool: string(),
    callId: string(),
    input: json(),
    card: approvalCardShape,
    digest: string(),
  }),
  "approval.decided": object({
    ...id,
    status: oneOf(["approved", "denied"]),
    decision: decisionShape,
  }),
  "approval.applying": object({ ...id, attempt: integer(), decisionId: nullable(string()) }),
  "approval.applied": object({ ...id, outcome: json() }),
  /** The apply returned normally but with a value the log cannot hold as it was (`code` says why). */
  "approval.warning": object({ ...id, code: string(), message: string() }),
  "approval.failed": object({ ...id, message: string() }),
  "approval.unconfirmed": object({ ...id, message: string() }),
  "approval.retried": object({ ...id, decisionId: nullable(string()) }),
  "approval.dismissed": object(id),
};
