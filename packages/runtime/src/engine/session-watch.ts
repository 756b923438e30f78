import type { SessionSignal } from "../ports/work-signal.ts";

type WatchListener = (lastSeq: number | null) => void;

/**
 * Readers of a session's log (SSE followers, `sessions.watch`) indexed by session, so one
 * signal subscription serves them all and a commit costs a map lookup, not a scan of readers.
 */
export class SessionWatchers {
  private readonly bySession = new Map<string, Set<WatchListener>>();

  watch(sessionId: string, listener: WatchListener): () => void {
    let set = this.bySession.get(sessionId);
    if (!set) {
      set = new Set();
      this.bySession.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.bySession.get(sessionId) === set) this.bySession.delete(sessionId);
    };
  }

  deliver(signal: SessionSignal): void {
    if (signal.kind === "commit") {
      const set = this.bySession.get(signal.sessionId);
      if (set) for (const listener of [...set]) safely(listener, signal.lastSeq);
      return;
    }
    for (const set of [...this.bySession.values()]) {
      for (const listener of [...set]) safely(listener, null);
    }
  }
}

function safely(listener: WatchListener, lastSeq: number | null): void {
  try {
    listener(lastSeq);
  } catch {
    // One reader's failure must not stop the others from waking.
  }
}
