import type { Egress } from "../agents/execution.ts";
import type { TurnScope } from "./turn-scope.ts";

/** The gateway URL and a fresh token for one execution of the turn's agent code, if any. */
export async function egressFor(scope: TurnScope): Promise<Egress | undefined> {
  return scope.ctx.egress?.({
    sessionId: scope.sessionId,
    agentId: scope.agentId,
    deploymentId: scope.deploymentId,
    turnId: scope.turn.id,
  });
}
