import type { SessionSignal } from "../ports/work-signal.ts";

type WatchListener = (lastSeq: number | null) => void;

/**
 * Readers of a session's log (SSE followers, `sessions.watch`) indexed by session, so one
 * signal subscription serves them all and a commit costs a map lookup, not a scan of readers.
 */
export class SessionWatchers {
  private readonly bySession = new Map<string, Set<WatchListener>>();
  /** What stops following each watched session (see WorkSignal#follow). */
  private readonly unfollow = new Map<string, () => void>();

  /** `follow`: the shared signal's, so it carries the commits of the sessions watched here. */
  constructor(private readonly follow?: (sessionId: string) => () => void) {}

  watch(sessionId: string, listener: WatchListener): () => void {
    let set = this.bySession.get(sessionId);
    if (!set) {
      set = new Set();
      this.bySession.set(sessionId, set);
      if (this.follow) this.unfollow.set(sessionId, this.follow(sessionId));
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.bySession.get(sessionId) === set) {
        this.bySession.delete(sessionId);
        this.unfollow.get(sessionId)?.();
        this.unfollow.delete(sessionId);
      }
    };
  }

  deliver(signal: SessionSignal): void {
    const sessionId = signal.sessionId;
    if (sessionId !== undefined) {
      const set = this.bySession.get(sessionId);
      const lastSeq = signal.kind === "commit" ? signal.lastSeq : null;
      if (set) for (const listener of [...set]) safely(listener, lastSeq);
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
