// Each execution of agent code that may call out (a tool's run, an approval's preview and
// apply) gets its own egress token, and the token must die with the call: a connection leaked
// into a timer or a stray promise must not reach an origin after the call has settled, nor
// record its requests under a finished turn. So the grant is a lease: the caller ends it as soon
// as the call's outcome is known, before committing it, and an abort of the call ends it too.

import type { Egress } from "../ports/agent-execution.ts";
import type { EgressRequest, EngineContext } from "./context.ts";
import type { TurnScope } from "./turn-scope.ts";

export interface EgressLease {
  /** What agent code gets: plain data (it may cross to a worker), never the revoke. */
  egress: Egress | undefined;
  /** Revokes the token; idempotent, never throws. */
  end(): Promise<void>;
}

const NO_EGRESS: EgressLease = { egress: undefined, end: async () => {} };

export async function leaseEgress(
  ctx: EngineContext,
  request: EgressRequest,
  signal?: AbortSignal,
): Promise<EgressLease> {
  const granted = ctx.egress ? await ctx.egress(request) : undefined;
  if (!granted) return NO_EGRESS;
  const { gatewayUrl, token, revoke } = granted;
  let ended: Promise<void> | undefined;
  const end = (): Promise<void> => {
    ended ??= (async () => {
      signal?.removeEventListener("abort", onAbort);
      try {
        await revoke?.();
      } catch (error) {
        ctx.log.error("egress token not revoked", {
          sessionId: request.sessionId,
          error: String(error),
        });
      }
    })();
    return ended;
  };
  const onAbort = () => void end();
  if (signal?.aborted) await end();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return { egress: { gatewayUrl, token }, end };
}

/** The lease for one execution of the turn's agent code; the turn's abort ends it too. */
export function egressFor(
  scope: TurnScope,
  call?: { callId: string; phase: "run" | "preview" },
): Promise<EgressLease> {
  return leaseEgress(
    scope.ctx,
    {
      sessionId: scope.sessionId,
      agentId: scope.agentId,
      deploymentId: scope.deploymentId,
      turnId: scope.turn.id,
      ...call,
    },
    scope.signal,
  );
}
