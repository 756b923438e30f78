// A delegation, as the parent session's log tells it. The parent's model called the delegation
// tool `subagent_<agentId>` (its own tool.started / tool.completed / tool.failed carry the call);
// these events say which child session runs it and what that child is waiting for. The child's
// own log starts with `session.created {parent}` and a turn whose input has source `subagent`.

import { approvalCardShape } from "../records/approval.ts";
import { questionOptionShape } from "../records/session.ts";
import { array, literal, object, oneOf, optional, string } from "../shape.ts";

const delegation = {
  /** The parent's delegation call. */
  callId: string(),
  /** The child's agent. */
  agentId: string(),
  /** The child session. */
  sessionId: string(),
};

export const subagentEvents = {
  /** The child session and its turn exist; `resumed` when a restarted call found them already made. */
  "subagent.started": object({
    ...delegation,
    turnId: string(),
    resumed: optional(literal(true)),
  }),
  /**
   * The child waits for a person: a question (answer it on the child session's turns route) or
   * an approval (decide it on the approvals route). The parent's call goes on waiting.
   */
  "subagent.waiting": object({
    ...delegation,
    reason: oneOf(["question", "approval"]),
    questionId: optional(string()),
    text: optional(string()),
    options: optional(array(questionOptionShape)),
    approvalId: optional(string()),
    tool: optional(string()),
    card: optional(approvalCardShape),
  }),
  /** The child answered; the call's tool.completed carries the answer. */
  "subagent.completed": object(delegation),
  /** The child's turn failed or was cancelled, or its session ended; the call failed. */
  "subagent.failed": object({ ...delegation, message: string() }),
};
