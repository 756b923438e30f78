import type { SessionSource } from "../ports/records.ts";
import type { WorkSignal } from "../ports/work-signal.ts";
import { createApprovals } from "./approvals.ts";
import { Deadlines } from "./deadlines.ts";
import { createMemoryApi } from "./memory-api.ts";
import { createSessionActors } from "./runtime-actors.ts";
import type { Runtime, SendTurnOptions, SendTurnResult } from "./runtime-api.ts";
import { listenForWork } from "./runtime-dispatch.ts";
import { createLifecycle, recoverSessions } from "./runtime-lifecycle.ts";
import {
  createEngineContext,
  type ExecutionOption,
  type RuntimeOptions,
  resolveExecution,
} from "./runtime-options.ts";
import { SessionWatchers } from "./session-watch.ts";
import { createSessionsApi } from "./sessions-api.ts";

/**
 * The session engine: runs agents' turns durably on a Store. The composition root: it makes the
 * engine context, the session actors, the approvals, the signal listener and the two APIs.
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const running = resolveExecution(options.execution, options.agents);
  const ctx = createEngineContext(options, running);
  const sessionActors = createSessionActors(ctx, options.idleReleaseMs ?? 1000);

  const signal = options.signal ?? ctx.notifier;
  // Readers follow their sessions on a shared signal that carries only followed sessions.
  const shared: WorkSignal | null = signal !== ctx.notifier ? signal : null;
  const follow = shared?.follow?.bind(shared);
  const watchers = new SessionWatchers(follow);
  // Fed by the shared signal only: what other processes commit (and this one's, repeated).
  const remoteWatchers =
    signal !== ctx.notifier && signal.shared ? new SessionWatchers(follow) : null;
  const waitOptions = {
    pollMs: options.waitPollMs ?? (remoteWatchers ? 5_000 : 250),
    // Unlike the runtime's own timers, a wait keeps the process alive, as its promise is owed.
    deadlines: new Deadlines<() => void>((run) => run(), { keepAlive: true }),
    runsHere: (id: string, turnId: string) =>
      sessionActors.actors.get(id)?.claimedTurnId === turnId,
    ...(remoteWatchers
      ? {
          watchRemote: (id: string, listener: (lastSeq: number | null) => void) =>
            remoteWatchers.watch(id, listener),
        }
      : {}),
  };

  const approvals = createApprovals(ctx, { applyTimeoutMs: options.applyTimeoutMs ?? 60_000 });
  const recover = () => recoverSessions(ctx, approvals, sessionActors);
  const stopListening = listenForWork(ctx, {
    signal,
    watchers,
    remoteWatchers,
    sessionActors,
    recover,
    remoteClaimDelayMs: options.remoteClaimDelayMs ?? 100,
  });
  const sessions = createSessionsApi(ctx, {
    sessionActors,
    watchers,
    waitOptions,
    watchesAllProcesses: signal.shared,
  });
  const lifecycle = createLifecycle(ctx, {
    sessionActors,
    recover,
    recoveryIntervalMs: options.recoveryIntervalMs,
    stopListening,
    running,
  });

  return {
    runtimeId: ctx.runtimeId,
    execution: ctx.execution,
    sessions,
    approvals,
    ...(ctx.memory ? { memory: createMemoryApi(ctx.memory) } : {}),
    start: lifecycle.start,
    close: lifecycle.close,
  };
}

export type {
  ExecutionOption,
  Runtime,
  RuntimeOptions,
  SendTurnOptions,
  SendTurnResult,
  SessionSource,
};
