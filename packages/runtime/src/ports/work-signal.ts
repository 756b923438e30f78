// The dispatch port between runtime processes. A store commit tells every process that shares
// the store "session S has events up to seq N" and, when the commit queued a turn, "S has new
// work". Processes wake on it instead of polling; the store stays the only source of truth
// (a signal carries no data a reader would trust: it only says where to read again).

/** One commit, or a resync after notifications may have been lost. */
export type SessionSignal =
  | {
      kind: "commit";
      sessionId: string;
      /** The session's last event seq after the commit (0 when it appended none). */
      lastSeq: number;
      /**
       * The commit queued a turn or freed a session with queued work: a runtime may claim it.
       * A store may leave it false when the committer claimed or held the lease, since that
       * runtime runs the turn itself.
       */
      work: boolean;
    }
  | {
      /**
       * Notifications may have been missed (the listening connection dropped and came back):
       * every reader should read again from its cursor, and dispatch should look for work.
       * With `sessionId`, only that session's readers: its commits are heard from now on (the
       * signal began following it), and any made before must be read.
       */
      kind: "resync";
      sessionId?: string;
    };

export type SignalListener = (signal: SessionSignal) => void;

export interface WorkSignal {
  /**
   * True when the signal carries the commits of every process on the store (PostgreSQL
   * LISTEN/NOTIFY); false when it only sees this process's own (the in-process Notifier), in
   * which case readers that care about other processes keep a fallback poll.
   */
  readonly shared: boolean;
  /** Calls `listener` for every commit the signal reaches, any session. Returns unsubscribe. */
  listen(listener: SignalListener): () => void;
  /**
   * Asks for every commit of one session, until the returned function is called. A signal
   * with `follow` may otherwise carry only work and resyncs, so a commit costs the processes
   * that do not read the session nothing; it emits `{ kind: "resync", sessionId }` once the
   * session's commits are heard. Without `follow` every commit reaches every listener.
   */
  follow?(sessionId: string): () => void;
}

/** Whether a batch of events queued a turn (the one event every queued turn is logged with). */
export function queuesWork(events: readonly { type: string }[]): boolean {
  return events.some((e) => e.type === "turn.queued");
}

/**
 * A set of listeners with isolated delivery: one listener that throws must not stop the others
 * nor the connection that delivers (a signal is advisory; the store is read again anyway).
 */
export class SignalFanout {
  private readonly listeners = new Set<SignalListener>();

  listen(listener: SignalListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(signal: SessionSignal): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(signal);
      } catch {
        // A listener's failure is its own; delivery to the rest goes on.
      }
    }
  }
}
