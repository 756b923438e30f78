// Every event the engine tests make is checked against @opencomputer/protocol: the harness's
// runtimes write through this wrapper, and a harness refuses to close while any event drifted
// (an undeclared type, a missing or undeclared field), so a drift fails the test that caused it.

import { eventIssues, newEventIssues } from "@opencomputer/protocol";
import type { EventRecord, NewEvent, Store } from "@opencomputer/runtime";

export interface ProtocolCheck {
  store: Store;
  /** One line per event that does not match, with the paths at fault. */
  problems: string[];
}

export function protocolChecked(store: Store): ProtocolCheck {
  const problems: string[] = [];
  const note = (issues: Array<{ path: string; message: string }>, event: { type: string }) => {
    if (issues.length === 0) return;
    const where = issues.map((i) => `${i.path} ${i.message}`).join("; ");
    problems.push(`${event.type}: ${where}`);
  };
  const stored = (events: readonly EventRecord[]) => {
    for (const event of events) note(eventIssues(event), event);
  };
  const wrapped: Partial<Store> = {
    async createSession(session, events: readonly NewEvent[]) {
      for (const event of events) note(newEventIssues(event), event);
      return store.createSession(session, events);
    },
    async apply(sessionId, batch) {
      const events = await store.apply(sessionId, batch);
      stored(events);
      return events;
    },
    async applyWithLease(sessionId, runtimeId, ttlMs, batch) {
      const result = await store.applyWithLease(sessionId, runtimeId, ttlMs, batch);
      if (result) stored(result.events);
      return result;
    },
  };
  const checked = new Proxy(store, {
    get(target, key, receiver) {
      if (Object.hasOwn(wrapped, key)) return wrapped[key as keyof Store];
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: checked, problems };
}
