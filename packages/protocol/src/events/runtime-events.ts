import { array, integer, nullable, object, optional, string } from "../shape.ts";

/**
 * The session's runtime: `runtime.disconnected` when the process running a turn was lost (the
 * turn is queued again), and the computer's generations (`runtime.started` … `released`).
 */
export const runtimeEvents = {
  "runtime.disconnected": object({ requeuedTurnIds: array(string()), runtimeId: string() }),
  "runtime.started": object({
    generation: integer(),
    expiresAt: string(),
    previousGeneration: optional(integer()),
  }),
  "runtime.replaced": object({ generation: integer(), reason: nullable(string()) }),
  "runtime.released": object({ generation: integer(), reason: string() }),
  /** Released because its lifetime ran out. */
  "runtime.expired": object({ generation: integer(), reason: string() }),
};
