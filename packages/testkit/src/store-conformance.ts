// The Store contract as tests: every implementation runs `storeConformance` from its own test
// file. Each test starts on a fresh, empty store. Refusals are checked by their StoreError
// code and by a snapshot of the session showing nothing of the refused batch was written.
// The sections live in store-conformance/, one file per part of the contract.

import type { SessionRecord, Store, TurnRecord, WriteBatch } from "@opencomputer/runtime";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { approvalsSection } from "./store-conformance/approvals.ts";
import type { SuiteContext } from "./store-conformance/context.ts";
import { eventLogSection } from "./store-conformance/event-log.ts";
import {
  createdEvents,
  ev,
  messageRecord,
  resultRecord,
  sessionRecord,
  toolCallRecord,
  turnRecord,
} from "./store-conformance/fixtures.ts";
import { guardsSection } from "./store-conformance/guards.ts";

/** A valid new session record (fresh id unless given), for stores' own tests. */
export { createdEvents, sessionRecord, turnRecord } from "./store-conformance/fixtures.ts";

import { deadHoldersSection } from "./store-conformance/dead-holders.ts";
import { leasesSection } from "./store-conformance/leases.ts";
import { queriesSection } from "./store-conformance/queries.ts";
import { recordsSection } from "./store-conformance/records.ts";
import { sessionsSection } from "./store-conformance/sessions.ts";
import { uniquenessSection } from "./store-conformance/uniqueness.ts";

export interface StoreFixture {
  store: Store;
  /** Runs after `store.close()`: removes whatever the store left behind. */
  cleanup(): Promise<void>;
}

export function storeConformance(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    let fixture: StoreFixture;

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });
    afterEach(async () => {
      await store.close();
      await fixture.cleanup();
    });

    async function newSession(over: Partial<SessionRecord> = {}): Promise<SessionRecord> {
      const s = sessionRecord(over);
      const { session, created } = await store.createSession(s, createdEvents(s));
      expect(created).toBe(true);
      return session;
    }

    async function newTurn(sessionId: string, over: Partial<TurnRecord> = {}) {
      const turn = turnRecord(sessionId, over);
      await store.apply(sessionId, { ops: [{ type: "turn.insert", turn }], events: [] });
      return turn;
    }

    /** Everything the store holds for a session, to show a refused batch changed nothing. */
    async function snapshot(sessionId: string) {
      return {
        session: await store.getSession(sessionId),
        turns: await store.listTurns(sessionId),
        messages: await store.listMessages(sessionId),
        toolCalls: await store.listToolCalls(sessionId),
        results: await store.listResults(sessionId, { limit: 1000 }),
        events: await store.readEvents(sessionId, 0, 1000),
      };
    }

    /** A batch touching every table, so a refusal that leaks any part of it is seen. */
    function fullBatch(sessionId: string, turnId: string): WriteBatch {
      return {
        ops: [
          { type: "session.update", patch: { status: "running" } },
          { type: "turn.update", id: turnId, patch: { status: "running", steps: 1 } },
          { type: "message.insert", message: messageRecord(sessionId, turnId) },
          { type: "toolCall.upsert", call: toolCallRecord(sessionId, turnId) },
          { type: "result.insert", record: resultRecord(sessionId, turnId) },
        ],
        events: [ev("turn.started", {}, turnId), ev("tool.started")],
      };
    }

    const c: SuiteContext = {
      store: () => store,
      newSession,
      newTurn,
      snapshot,
      fullBatch,
    };
    sessionsSection(c);
    eventLogSection(c);
    guardsSection(c);
    uniquenessSection(c);
    recordsSection(c);
    approvalsSection(c);
    leasesSection(c);
    deadHoldersSection(c);
    queriesSection(c);
  });
}
