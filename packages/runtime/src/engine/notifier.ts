import type { EventRecord } from "../store/records.ts";

type Listener = (events: readonly EventRecord[]) => void;

/**
 * In-process fan-out of freshly committed events, so waiters wake without polling the store.
 * Only this process's writes pass through it; readers that must see other processes' writes
 * also poll (see `waitForTurn`).
 */
export class Notifier {
  private readonly listeners = new Map<string, Set<Listener>>();

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

  publish(sessionId: string, events: readonly EventRecord[]): void {
    const set = this.listeners.get(sessionId);
    if (!set) return;
    for (const listener of [...set]) listener(events);
  }
}
