import type { Approvals } from "./approvals.ts";
import type { EngineContext } from "./context.ts";
import { expireDeadHolders } from "./dead-holders.ts";
import type { SessionActors } from "./runtime-actors.ts";
import type { ResolvedExecution } from "./runtime-options.ts";

/**
 * Approvals left mid-apply, then every session a runtime that died left with work: those whose
 * lease expired, and at once those of a holder this machine knows is dead (dead-holders.ts).
 */
export async function recoverSessions(
  ctx: EngineContext,
  approvals: Approvals,
  sessionActors: SessionActors,
): Promise<void> {
  await approvals.recover();
  await expireDeadHolders(ctx);
  for (const sessionId of await ctx.store.listRecoverableSessions()) sessionActors.kick(sessionId);
}

/** The longest default time between two recovery passes. */
const MAX_RECOVERY_INTERVAL_MS = 1000;

export interface LifecycleOptions {
  sessionActors: SessionActors;
  recover(): Promise<void>;
  /** Default leaseMs / 2, at most 1 s (at least 50 ms). */
  recoveryIntervalMs: number | undefined;
  /** Stops listening to the runtime's signals. */
  stopListening(): void;
  running: ResolvedExecution;
}

/** The runtime's `start` and `close`. */
export function createLifecycle(
  ctx: EngineContext,
  options: LifecycleOptions,
): { start(): Promise<void>; close(): Promise<void> } {
  const { sessionActors, recover, running } = options;
  let recoveryTimer: NodeJS.Timeout | null = null;
  return {
    async start(): Promise<void> {
      await recover();
      // At most a second apart, so a runtime on another machine (which cannot be judged dead
      // from here) is replaced within leaseMs + 1 s. A pass is two reads driven by the sessions
      // with work, whatever the number of sessions (store-postgres lease.ts), so a short
      // interval costs a constant, small load per process.
      const every =
        options.recoveryIntervalMs ??
        Math.max(50, Math.min(MAX_RECOVERY_INTERVAL_MS, Math.floor(ctx.leaseMs / 2)));
      recoveryTimer = setInterval(
        () => void recover().catch((e) => ctx.log.error("recovery failed", { error: String(e) })),
        every,
      );
      recoveryTimer.unref();
    },
    async close(): Promise<void> {
      sessionActors.stopTaking();
      options.stopListening();
      if (recoveryTimer) clearInterval(recoveryTimer);
      ctx.timers.close();
      await sessionActors.releaseAll();
      if (running.owned) await running.execution.close();
    },
  };
}
