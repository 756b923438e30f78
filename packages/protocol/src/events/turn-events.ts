import { agentInputShape } from "../records/input.ts";
import { TURN_MODES, turnErrorShape } from "../records/session.ts";
import { array, boolean, integer, literal, object, oneOf, optional, string } from "../shape.ts";

/** A turn from the input that made it to its one terminal event. */
export const turnEvents = {
  /** An input arrived; `heldFor` when it waits with an open question (delivered as steering). */
  "message.received": object({
    input: agentInputShape,
    mode: oneOf(TURN_MODES),
    heldFor: optional(string()),
    heldId: optional(string()),
  }),
  /** `requeued` when a runtime was lost while the turn ran and it waits to run again. */
  "turn.queued": object({ mode: oneOf(TURN_MODES), requeued: optional(literal(true)) }),
  "turn.steered": object({ activeTurnId: string() }),
  "turn.interrupted": object({ interruptedTurnIds: array(string()) }),
  /** `resumed` when a runtime picks up a turn another runtime had started. */
  "turn.started": object({ resumed: optional(literal(true)) }),
  /** `outcome`: `completed`, `question`, or `steered` (delivered into `activeTurnId`). */
  "turn.completed": object({
    outcome: oneOf(["completed", "question", "steered"]),
    activeTurnId: optional(string()),
  }),
  "turn.failed": turnErrorShape,
  "turn.cancelled": object({
    reason: oneOf(["interrupted", "session_ended"]),
    replacementTurnId: optional(string()),
    settledAfterMs: integer(),
    operationsSettled: boolean(),
    computerTerminated: boolean(),
  }),
};
