import type { EventRecord } from "../ports/records.ts";
import {
  queuesWork,
  SignalFanout,
  type SignalListener,
  type WorkSignal,
} from "../ports/work-signal.ts";

type Listener = (events: readonly EventRecord[]) => void;

/**
 * In-process fan-out of freshly committed events, so waiters wake without polling the store.
 * It is also the in-process `WorkSignal` (the default): it only sees this process's writes, so
 * it is not `shared`, and readers that must see other processes' writes either get a shared
 * signal (PostgreSQL LISTEN/NOTIFY, see work-signal.ts) or poll.
 */
export class Notifier implements WorkSignal {
  readonly shared = false;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly fanout = new SignalFanout();

  subscribe(sessionId: string, listener: Listener): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(sessionId);
    };
  }

  listen(listener: SignalListener): () => void {
    return this.fanout.listen(listener);
  }

  publish(sessionId: string, events: readonly EventRecord[]): void {
    const set = this.listeners.get(sessionId);
    if (set) for (const listener of [...set]) listener(events);
    const last = events[events.length - 1];
    if (last) {
      this.fanout.emit({ kind: "commit", sessionId, lastSeq: last.seq, work: queuesWork(events) });
    }
  }
}
