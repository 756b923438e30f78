import type { SessionSignal, WorkSignal } from "../ports/work-signal.ts";
import type { EngineContext } from "./context.ts";
import type { SessionActors } from "./runtime-actors.ts";
import type { SessionWatchers } from "./session-watch.ts";

export interface DispatchOptions {
  /** The runtime's signal: `ctx.notifier`, or a signal shared with other processes. */
  signal: WorkSignal;
  /** This process's readers (`sessions.watch`). */
  watchers: SessionWatchers;
  /** Readers fed by the shared signal only (`waitForTurn`); null without one. */
  remoteWatchers: SessionWatchers | null;
  sessionActors: SessionActors;
  /** Looks at every recoverable session again (after a resync). */
  recover(): Promise<void>;
  remoteClaimDelayMs: number;
}

/**
 * Listens to the runtime's signals: wakes readers, and hands new work to the session actors.
 * Returns the function that stops listening (and drops deferred claims).
 */
export function listenForWork(ctx: EngineContext, options: DispatchOptions): () => void {
  const { signal, watchers, remoteWatchers, sessionActors, recover, remoteClaimDelayMs } = options;
  const { actors, kick } = sessionActors;
  // Dispatch across processes. Every process that hears "session S has new work" looks at it;
  // the lease claim in the turn-start write lets exactly one of them run the turn, and the
  // others back off (SessionActor.loop reads the live lease first). After a resync (the signal
  // may have missed notifications) everything is looked at again once.
  //
  // A process with an actor for the session (it holds or just held the lease) looks at once.
  // The others wait `remoteClaimDelayMs` first: the process that queued the turn has already
  // kicked its own actor, and letting it claim keeps the turn where its client waits, instead
  // of every process racing for every new turn.
  const deferred = new Map<string, NodeJS.Timeout>();
  function dispatch(s: SessionSignal): void {
    if (sessionActors.closed) return;
    if (s.kind === "commit") {
      if (!s.work) return;
      if (actors.has(s.sessionId)) kick(s.sessionId);
      else if (!deferred.has(s.sessionId)) {
        const timer = setTimeout(() => {
          deferred.delete(s.sessionId);
          kick(s.sessionId);
        }, remoteClaimDelayMs);
        timer.unref();
        deferred.set(s.sessionId, timer);
      }
      return;
    }
    // A resync of one session only concerns its readers.
    if (s.sessionId !== undefined) return;
    for (const sessionId of actors.keys()) kick(sessionId);
    void recover().catch((e) => ctx.log.error("recovery failed", { error: String(e) }));
  }
  // Local commits wake this process's readers at once; a shared signal adds everyone else's
  // (this process's own commits come back through it too: a spare wake-up, never a gap).
  const unlisten = [ctx.notifier.listen((s) => watchers.deliver(s))];
  if (signal !== ctx.notifier) {
    unlisten.push(
      signal.listen((s) => {
        watchers.deliver(s);
        remoteWatchers?.deliver(s);
        dispatch(s);
      }),
    );
  }
  return () => {
    for (const stop of unlisten) stop();
    for (const timer of deferred.values()) clearTimeout(timer);
    deferred.clear();
  };
}
