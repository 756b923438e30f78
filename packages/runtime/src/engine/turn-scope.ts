import type { Fence } from "../store/port.ts";
import type { TurnRecord } from "../store/records.ts";
import type { EngineContext } from "./context.ts";
import type { Conversation } from "./conversation.ts";

/** Everything a running turn's parts need: who runs it, under which lease, and its abort signal. */
export interface TurnScope {
  ctx: EngineContext;
  sessionId: string;
  agentId: string;
  deploymentId: string;
  turn: TurnRecord;
  fence: Fence;
  signal: AbortSignal;
  conversation: Conversation;
  /** Tool executions still running: an interrupt gives them a grace period to honour `signal`. */
  inflight: Set<Promise<unknown>>;
  /** Set when a steering input waits to be folded into this turn before the next model step. */
  steering: { pending: boolean };
}

/** The batch guard every write of a running turn carries (invariant 2). */
export function guard(scope: TurnScope) {
  return { fence: scope.fence, expectTurn: { id: scope.turn.id, status: ["running"] as const } };
}
