// The Store contract as tests: every implementation runs `storeConformance` from its own test
// file. Each test starts on a fresh, empty store. Refusals are checked by their StoreError
// code and by a snapshot of the session showing nothing of the refused batch was written.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../src/store/errors.ts";
import type { NewEvent, Store, WriteBatch } from "../src/store/port.ts";
import type {
  ApprovalRecord,
  MessageRecord,
  ResultRecord,
  SessionRecord,
  ToolCallRecord,
  TurnRecord,
} from "../src/store/records.ts";

export interface StoreFixture {
  store: Store;
  /** Runs after `store.close()`: removes whatever the store left behind. */
  cleanup(): Promise<void>;
}

let counter = 0;
const uid = (prefix: string) => `${prefix}_${(++counter).toString().padStart(6, "0")}`;
const OLD = "2020-01-01T00:00:00.000Z";
const T = 1_000_000; // a `now` far in the past, so real time never interferes with leases

function sessionRecord(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: uid("ses"),
    agentId: "agent_a",
    deploymentId: "dep_1",
    environment: "production",
    status: "new",
    source: "api",
    labels: {},
    executionMode: "default",
    result: null,
    question: null,
    runtime: {},
    revision: 1,
    lastSeq: 0,
    idempotencyKey: null,
    lease: null,
    createdAt: OLD,
    updatedAt: OLD,
    ...over,
  };
}

function createdEvents(s: SessionRecord): NewEvent[] {
  return [{ type: "session.created", data: { agentId: s.agentId, deploymentId: s.deploymentId } }];
}

function turnRecord(sessionId: string, over: Partial<TurnRecord> = {}): TurnRecord {
  return {
    id: uid("turn"),
    sessionId,
    input: { source: "user", text: "hello" },
    mode: "queue",
    status: "queued",
    outcome: null,
    error: null,
    idempotencyKey: null,
    steps: 0,
    createdAt: OLD,
    updatedAt: OLD,
    startedAt: null,
    settledAt: null,
    ...over,
  };
}

function messageRecord(sessionId: string, turnId: string, id = uid("msg")): MessageRecord {
  return {
    id,
    sessionId,
    turnId,
    role: "assistant",
    content: [{ type: "text", text: id }],
    createdAt: OLD,
  };
}

function toolCallRecord(sessionId: string, turnId: string, over: Partial<ToolCallRecord> = {}) {
  const call: ToolCallRecord = {
    sessionId,
    callId: uid("call"),
    turnId,
    messageId: "msg_x",
    tool: "lookup_order",
    input: { orderId: "A1" },
    status: "started",
    output: null,
    error: null,
    attempts: 1,
    startedAt: OLD,
    settledAt: null,
    ...over,
  };
  return call;
}

function resultRecord(sessionId: string, turnId: string, over: Partial<ResultRecord> = {}) {
  const record: ResultRecord = {
    resultId: uid("res"),
    agentId: "agent_a",
    deploymentId: "dep_1",
    sessionId,
    turnId,
    messageId: "msg_x",
    toolCallId: uid("call"),
    resultTool: "report",
    schemaDigest: "sha256:aa",
    dataDigest: "sha256:bb",
    data: { ok: true },
    createdAt: OLD,
    ...over,
  };
  return record;
}

const ev = (type: string, data: NewEvent["data"] = {}, turnId?: string): NewEvent =>
  turnId === undefined ? { type, data } : { type, turnId, data };

async function refusal(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected the store to refuse").toBeInstanceOf(StoreError);
  return error as StoreError;
}

async function expectRefused(promise: Promise<unknown>, code: string): Promise<void> {
  expect((await refusal(promise)).code).toBe(code);
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

    describe("sessions", () => {
      it("creates a session, appends its events from seq 1 and reads it back", async () => {
        const s = sessionRecord({ labels: { env: "prod" }, runtime: { region: "eu" } });
        const { session, created } = await store.createSession(s, [
          ...createdEvents(s),
          ev("session.status_changed", { from: "new", to: "idle" }),
        ]);
        expect(created).toBe(true);
        expect(session).toStrictEqual({ ...s, lastSeq: 2 });
        expect(await store.getSession(s.id)).toStrictEqual(session);
        const events = await store.readEvents(s.id, 0, 10);
        expect(events.map((e) => [e.seq, e.type, e.sessionId])).toEqual([
          [1, "session.created", s.id],
          [2, "session.status_changed", s.id],
        ]);
        expect(events[0]!.data).toStrictEqual({ agentId: "agent_a", deploymentId: "dep_1" });
        expect("turnId" in events[0]!).toBe(false);
        expect(new Date(events[0]!.timestamp).toISOString()).toBe(events[0]!.timestamp);
        expect(new Set(events.map((e) => e.id)).size).toBe(2);
        expect(events.every((e) => typeof e.id === "string" && e.id.length > 0)).toBe(true);
      });

      it("returns the existing session for a reused idempotency key and writes nothing", async () => {
        const first = await newSession({ idempotencyKey: "idem-1" });
        const again = sessionRecord({ idempotencyKey: "idem-1" });
        const replay = await store.createSession(again, createdEvents(again));
        expect(replay).toStrictEqual({ session: first, created: false });
        expect(await store.getSession(again.id)).toBeUndefined();
        expect(await store.readEvents(again.id, 0, 10)).toEqual([]);
        expect(await store.readEvents(first.id, 0, 10)).toHaveLength(1);
        // Sessions without a key never collide.
        await newSession();
        await newSession();
        expect(await store.listSessions({ limit: 10 })).toHaveLength(3);
      });

      it("refuses a session id already used", async () => {
        const first = await newSession();
        const clash = sessionRecord({ id: first.id, agentId: "agent_b" });
        await expectRefused(store.createSession(clash, createdEvents(clash)), "duplicate");
        expect(await store.getSession(first.id)).toStrictEqual(first);
        expect(await store.readEvents(first.id, 0, 10)).toHaveLength(1);
      });

      it("returns undefined or empty for unknown ids", async () => {
        const s = await newSession();
        expect(await store.getSession("ses_missing")).toBeUndefined();
        expect(await store.getTurn(s.id, "turn_missing")).toBeUndefined();
        expect(await store.findTurnByIdempotencyKey(s.id, "nope")).toBeUndefined();
        expect(await store.getToolCall(s.id, "call_missing")).toBeUndefined();
        expect(await store.getResult(s.id, "res_missing")).toBeUndefined();
        expect(await store.getResultByCall(s.id, "call_missing")).toBeUndefined();
        expect(await store.readEvents("ses_missing", 0, 10)).toEqual([]);
        expect(await store.listTurns("ses_missing")).toEqual([]);
      });
    });

    describe("apply and the event log", () => {
      it("appends events with gapless seqs and returns them as stored", async () => {
        const s = await newSession();
        const turn = turnRecord(s.id);
        const appended = await store.apply(s.id, {
          ops: [{ type: "turn.insert", turn }],
          events: [ev("message.received", { text: "hi" }, turn.id), ev("turn.queued")],
        });
        expect(appended.map((e) => e.seq)).toEqual([2, 3]);
        expect(appended[0]!.turnId).toBe(turn.id);
        expect("turnId" in appended[1]!).toBe(false);
        expect(await store.readEvents(s.id, 1, 10)).toStrictEqual(appended);
        expect((await store.getSession(s.id))!.lastSeq).toBe(3);
        expect(await store.apply(s.id, { ops: [], events: [] })).toEqual([]);
        expect((await store.getSession(s.id))!.lastSeq).toBe(3);
        const next = await store.apply(s.id, { ops: [], events: [ev("a"), ev("b"), ev("c")] });
        expect(next.map((e) => e.seq)).toEqual([4, 5, 6]);
      });

      it("keeps seqs gapless under 20 concurrent applies on one session", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.apply(s.id, {
              ops: [{ type: "message.insert", message: messageRecord(s.id, turn.id) }],
              events: [ev("x", { i }), ev("y", { i })],
            }),
          ),
        );
        for (const batch of results) expect(batch[1]!.seq).toBe(batch[0]!.seq + 1);
        const seqs = results.flat().map((e) => e.seq);
        expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
        const log = await store.readEvents(s.id, 0, 100);
        expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
        expect((await store.getSession(s.id))!.lastSeq).toBe(41);
        expect(await store.listMessages(s.id)).toHaveLength(20);
      });

      it("pages events with after/limit and never changes an event once written", async () => {
        const s = await newSession();
        await store.apply(s.id, { ops: [], events: [ev("a"), ev("b"), ev("c"), ev("d")] });
        const first = await store.readEvents(s.id, 0, 3);
        expect(first.map((e) => e.seq)).toEqual([1, 2, 3]);
        expect((await store.readEvents(s.id, 3, 3)).map((e) => e.seq)).toEqual([4, 5]);
        expect((await store.readEvents(s.id, 2, 1)).map((e) => e.type)).toEqual(["b"]);
        expect(await store.readEvents(s.id, 5, 10)).toEqual([]);
        await store.apply(s.id, {
          ops: [{ type: "session.update", patch: { status: "idle" } }],
          events: [ev("e")],
        });
        await store.acquireLease(s.id, "rt_1", 1000, T);
        expect(await store.readEvents(s.id, 0, 3)).toStrictEqual(first);
      });

      it("refuses a batch for an unknown session", async () => {
        await expectRefused(
          store.apply("ses_missing", { ops: [], events: [ev("x")] }),
          "session_not_found",
        );
      });
    });

    describe("guards", () => {
      it("refuses a stale fence and writes nothing of the batch", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const old = (await store.acquireLease(s.id, "rt_1", 1000, T))!;
        const current = (await store.acquireLease(s.id, "rt_2", 1000, T + 5000))!;
        const before = await snapshot(s.id);
        await expectRefused(
          store.apply(s.id, { ...fullBatch(s.id, turn.id), fence: old }),
          "stale_epoch",
        );
        await expectRefused(
          store.apply(s.id, {
            ...fullBatch(s.id, turn.id),
            fence: { runtimeId: "rt_1", epoch: current.epoch },
          }),
          "stale_epoch",
        );
        expect(await snapshot(s.id)).toStrictEqual(before);
        const ok = await store.apply(s.id, { ...fullBatch(s.id, turn.id), fence: current });
        expect(ok.map((e) => e.seq)).toEqual([
          before.session!.lastSeq + 1,
          before.session!.lastSeq + 2,
        ]);
      });

      it("refuses a fence on a session nobody leased, and accepts the holder after expiry", async () => {
        const s = await newSession();
        await expectRefused(
          store.apply(s.id, { fence: { runtimeId: "rt_1", epoch: 1 }, ops: [], events: [ev("x")] }),
          "stale_epoch",
        );
        // Expiry alone does not fence: only a new holder (a new epoch) does.
        const lease = (await store.acquireLease(s.id, "rt_1", 10, T))!;
        const done = await store.apply(s.id, { fence: lease, ops: [], events: [ev("x")] });
        expect(done).toHaveLength(1);
      });

      it("refuses expectTurn unless the turn exists in the session with a listed status", async () => {
        const s = await newSession();
        const other = await newSession();
        const turn = await newTurn(s.id, { status: "queued" });
        const foreign = await newTurn(other.id, { status: "running" });
        const before = await snapshot(s.id);
        for (const expectTurn of [
          { id: turn.id, status: ["running"] as const },
          { id: "turn_missing", status: ["queued"] as const },
          { id: foreign.id, status: ["running"] as const },
        ]) {
          await expectRefused(
            store.apply(s.id, { ...fullBatch(s.id, turn.id), expectTurn }),
            "turn_not_active",
          );
        }
        expect(await snapshot(s.id)).toStrictEqual(before);
        const ok = await store.apply(s.id, {
          ...fullBatch(s.id, turn.id),
          expectTurn: { id: turn.id, status: ["queued", "running"] },
        });
        expect(ok).toHaveLength(2);
      });

      it("refuses expectSession unless the session has a listed status", async () => {
        const s = await newSession({ status: "idle" });
        const turn = await newTurn(s.id);
        const before = await snapshot(s.id);
        await expectRefused(
          store.apply(s.id, {
            ...fullBatch(s.id, turn.id),
            expectSession: { status: ["running", "new"] },
          }),
          "session_state",
        );
        expect(await snapshot(s.id)).toStrictEqual(before);
        await store.apply(s.id, {
          ...fullBatch(s.id, turn.id),
          expectSession: { status: ["idle"] },
        });
        expect((await store.getSession(s.id))!.status).toBe("running");
      });

      it("checks the fence first, then expectTurn, then expectSession", async () => {
        const s = await newSession({ status: "idle" });
        const turn = await newTurn(s.id, { status: "completed" });
        const expectTurn = { id: turn.id, status: ["running"] as const };
        const expectSession = { status: ["running"] as const };
        const fence = { runtimeId: "rt_x", epoch: 7 };
        const batch = { ops: [], events: [ev("x")] };
        await expectRefused(
          store.apply(s.id, { ...batch, fence, expectTurn, expectSession }),
          "stale_epoch",
        );
        await expectRefused(
          store.apply(s.id, { ...batch, expectTurn, expectSession }),
          "turn_not_active",
        );
        await expectRefused(store.apply(s.id, { ...batch, expectSession }), "session_state");
      });

      it("refuses expectOpenCalls unless the turn's started calls are exactly those listed", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id, { status: "running" });
        const a = toolCallRecord(s.id, turn.id, { status: "started" });
        const b = toolCallRecord(s.id, turn.id, { status: "started" });
        const done = toolCallRecord(s.id, turn.id, { status: "completed" });
        await store.apply(s.id, {
          ops: [a, b, done].map((call) => ({ type: "toolCall.upsert" as const, call })),
          events: [],
        });
        const before = await snapshot(s.id);
        for (const callIds of [
          [a.callId],
          [a.callId, b.callId, done.callId],
          [],
          [a.callId, "call_x"],
        ]) {
          await expectRefused(
            store.apply(s.id, {
              ...fullBatch(s.id, turn.id),
              expectOpenCalls: { turnId: turn.id, callIds },
            }),
            "calls_changed",
          );
        }
        expect(await snapshot(s.id)).toStrictEqual(before);
        const ok = await store.apply(s.id, {
          ops: [],
          events: [ev("x")],
          expectOpenCalls: { turnId: turn.id, callIds: [b.callId, a.callId] },
        });
        expect(ok).toHaveLength(1);
        const other = await newTurn(s.id, { status: "running" });
        await store.apply(s.id, {
          ops: [],
          events: [],
          expectOpenCalls: { turnId: other.id, callIds: [] },
        });
      });

      it("refuses turn.update of a turn the session does not have", async () => {
        const s = await newSession();
        const before = await snapshot(s.id);
        await expectRefused(
          store.apply(s.id, {
            ops: [{ type: "turn.update", id: "turn_missing", patch: { status: "running" } }],
            events: [ev("turn.started")],
          }),
          "turn_not_active",
        );
        expect(await snapshot(s.id)).toStrictEqual(before);
      });
    });

    describe("uniqueness", () => {
      it("refuses a second result for the same call, atomically", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const first = resultRecord(s.id, turn.id);
        await store.apply(s.id, { ops: [{ type: "result.insert", record: first }], events: [] });
        const before = await snapshot(s.id);
        const batch = fullBatch(s.id, turn.id);
        const dup = resultRecord(s.id, turn.id, {
          toolCallId: first.toolCallId,
          data: { other: 1 },
        });
        await expectRefused(
          store.apply(s.id, {
            ...batch,
            ops: [...batch.ops, { type: "result.insert", record: dup }],
          }),
          "duplicate",
        );
        expect(await snapshot(s.id)).toStrictEqual(before);
        expect(await store.getResultByCall(s.id, first.toolCallId)).toStrictEqual(first);
        const sameId = resultRecord(s.id, turn.id, { resultId: first.resultId });
        await expectRefused(
          store.apply(s.id, {
            ops: [{ type: "result.insert", record: sameId }],
            events: [ev("x")],
          }),
          "duplicate",
        );
        expect(await snapshot(s.id)).toStrictEqual(before);
      });

      it("refuses a turn whose idempotency key the session already used, atomically", async () => {
        const s = await newSession();
        const other = await newSession();
        const first = await newTurn(s.id, { idempotencyKey: "key-1" });
        const before = await snapshot(s.id);
        await expectRefused(
          store.apply(s.id, {
            ops: [
              { type: "message.insert", message: messageRecord(s.id, first.id) },
              { type: "turn.insert", turn: turnRecord(s.id, { idempotencyKey: "key-1" }) },
            ],
            events: [ev("turn.queued")],
          }),
          "duplicate",
        );
        expect(await snapshot(s.id)).toStrictEqual(before);
        expect(await store.findTurnByIdempotencyKey(s.id, "key-1")).toStrictEqual(first);
        // The key is per session, and turns without a key never collide.
        const elsewhere = await newTurn(other.id, { idempotencyKey: "key-1" });
        expect(await store.findTurnByIdempotencyKey(other.id, "key-1")).toStrictEqual(elsewhere);
        await newTurn(s.id);
        await newTurn(s.id);
        expect(await store.listTurns(s.id)).toHaveLength(3);
      });

      it("refuses a turn or message id already used in the session", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const message = messageRecord(s.id, turn.id);
        await store.apply(s.id, { ops: [{ type: "message.insert", message }], events: [] });
        const before = await snapshot(s.id);
        await expectRefused(newTurn(s.id, { id: turn.id }), "duplicate");
        await expectRefused(
          store.apply(s.id, { ops: [{ type: "message.insert", message }], events: [ev("x")] }),
          "duplicate",
        );
        expect(await snapshot(s.id)).toStrictEqual(before);
      });
    });

    describe("records", () => {
      it("updates turns field by field and lists them in insertion order", async () => {
        const s = await newSession();
        const b = await newTurn(s.id, { id: "turn_b", idempotencyKey: "k" });
        const a = await newTurn(s.id, { id: "turn_a" });
        await store.apply(s.id, {
          ops: [
            {
              type: "turn.update",
              id: b.id,
              patch: { status: "failed", error: { code: "tool_failed", message: "x", tool: "t" } },
            },
            {
              type: "turn.update",
              id: b.id,
              patch: { steps: 2, settledAt: "2024-01-01T00:00:00.000Z" },
            },
          ],
          events: [],
        });
        const updated = (await store.getTurn(s.id, b.id))!;
        expect(updated).toStrictEqual({
          ...b,
          status: "failed",
          error: { code: "tool_failed", message: "x", tool: "t" },
          steps: 2,
          settledAt: "2024-01-01T00:00:00.000Z",
          updatedAt: updated.updatedAt,
        });
        expect(updated.updatedAt).not.toBe(OLD);
        expect((await store.listTurns(s.id)).map((t) => t.id)).toEqual(["turn_b", "turn_a"]);
        expect(await store.getTurn(s.id, a.id)).toStrictEqual(a);
      });

      it("lists messages in insertion order", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const ids = ["msg_b", "msg_c", "msg_a"];
        await store.apply(s.id, {
          ops: ids.slice(0, 2).map((id) => ({
            type: "message.insert" as const,
            message: messageRecord(s.id, turn.id, id),
          })),
          events: [],
        });
        await store.apply(s.id, {
          ops: [{ type: "message.insert", message: messageRecord(s.id, turn.id, "msg_a") }],
          events: [],
        });
        const messages = await store.listMessages(s.id);
        expect(messages.map((m) => m.id)).toEqual(ids);
        expect(messages[2]).toStrictEqual(messageRecord(s.id, turn.id, "msg_a"));
      });

      it("upserts tool calls in place, keeping their first insertion order", async () => {
        const s = await newSession();
        const t1 = await newTurn(s.id);
        const t2 = await newTurn(s.id);
        const b = toolCallRecord(s.id, t1.id, { callId: "call_b" });
        const a = toolCallRecord(s.id, t1.id, { callId: "call_a" });
        const c = toolCallRecord(s.id, t2.id, { callId: "call_c" });
        for (const call of [b, a, c]) {
          await store.apply(s.id, { ops: [{ type: "toolCall.upsert", call }], events: [] });
        }
        const done: ToolCallRecord = {
          ...b,
          status: "completed",
          output: { found: true },
          attempts: 2,
          settledAt: "2024-01-01T00:00:01.000Z",
        };
        await store.apply(s.id, { ops: [{ type: "toolCall.upsert", call: done }], events: [] });
        expect(await store.listToolCalls(s.id)).toStrictEqual([done, a, c]);
        expect(await store.listToolCalls(s.id, t1.id)).toStrictEqual([done, a]);
        expect(await store.listToolCalls(s.id, t2.id)).toStrictEqual([c]);
        expect(await store.getToolCall(s.id, "call_b")).toStrictEqual(done);
      });

      it("bumps the revision on session and turn changes only", async () => {
        const s = await newSession();
        const rev = async () => (await store.getSession(s.id))!.revision;
        const r0 = await rev();
        const turn = turnRecord(s.id);
        await store.apply(s.id, {
          ops: [{ type: "message.insert", message: messageRecord(s.id, turn.id) }],
          events: [ev("x")],
        });
        expect(await rev()).toBe(r0);
        await store.apply(s.id, { ops: [{ type: "turn.insert", turn }], events: [] });
        const r1 = await rev();
        expect(r1).toBeGreaterThan(r0);
        await store.apply(s.id, {
          ops: [{ type: "turn.update", id: turn.id, patch: { status: "running" } }],
          events: [],
        });
        const r2 = await rev();
        expect(r2).toBeGreaterThan(r1);
        const result = { turnId: turn.id, callId: "c1", reportedAt: OLD, data: { n: 1 } };
        await store.apply(s.id, {
          ops: [
            {
              type: "session.update",
              patch: {
                status: "running",
                labels: { a: "b" },
                result,
                question: { q: 1 },
                runtime: { r: 2 },
              },
            },
          ],
          events: [],
        });
        const after = (await store.getSession(s.id))!;
        expect(after.revision).toBeGreaterThan(r2);
        expect(after.updatedAt).not.toBe(OLD);
        expect(after).toMatchObject({
          status: "running",
          labels: { a: "b" },
          result,
          question: { q: 1 },
          runtime: { r: 2 },
        });
        await store.apply(s.id, {
          ops: [{ type: "session.update", patch: { result: null } }],
          events: [],
        });
        const cleared = (await store.getSession(s.id))!;
        expect(cleared.result).toBeNull();
        expect(cleared.labels).toEqual({ a: "b" });
        expect(cleared.revision).toBeGreaterThan(after.revision);
      });

      it("applies several session.update ops of one batch in order", async () => {
        const s = await newSession();
        await store.apply(s.id, {
          ops: [
            { type: "session.update", patch: { status: "running", labels: { a: "1" } } },
            { type: "session.update", patch: { question: { q: 1 } } },
            { type: "session.update", patch: { labels: { b: "2" } } },
          ],
          events: [],
        });
        expect(await store.getSession(s.id)).toMatchObject({
          status: "running",
          question: { q: 1 },
          labels: { b: "2" },
        });
      });

      it("lists results oldest first with after, turnId and limit", async () => {
        const s = await newSession();
        const t1 = await newTurn(s.id);
        const t2 = await newTurn(s.id);
        const rc = resultRecord(s.id, t1.id, { resultId: "res_c" });
        const ra = resultRecord(s.id, t2.id, { resultId: "res_a" });
        const rb = resultRecord(s.id, t1.id, { resultId: "res_b" });
        for (const record of [rc, ra, rb]) {
          await store.apply(s.id, { ops: [{ type: "result.insert", record }], events: [] });
        }
        expect(await store.listResults(s.id, { limit: 10 })).toStrictEqual([rc, ra, rb]);
        expect(await store.listResults(s.id, { limit: 2 })).toStrictEqual([rc, ra]);
        expect(await store.listResults(s.id, { after: "res_c", limit: 10 })).toStrictEqual([
          ra,
          rb,
        ]);
        expect(await store.listResults(s.id, { after: "res_b", limit: 10 })).toStrictEqual([]);
        expect(await store.listResults(s.id, { turnId: t1.id, limit: 10 })).toStrictEqual([rc, rb]);
        expect(
          await store.listResults(s.id, { turnId: t1.id, after: "res_c", limit: 10 }),
        ).toStrictEqual([rb]);
        expect(await store.getResult(s.id, "res_a")).toStrictEqual(ra);
        expect(await store.getResultByCall(s.id, rb.toolCallId)).toStrictEqual(rb);
        const other = await newSession();
        expect(await store.getResult(other.id, "res_a")).toBeUndefined();
        expect(await store.listResults(other.id, { limit: 10 })).toEqual([]);
      });

      it("hands back JSON values exactly as given", async () => {
        const tricky = {
          nested: { deep: [1, 2.5, -3e-7, 9007199254740991, true, false, null, "", {}, []] },
          unicode: 'héllo — 日本語 🧪 \u0000 \u2028 "quoted" \\ \n\t',
          "key.with.dots": "x",
          "$[0]": { "": null },
          nothing: null,
        };
        const s = sessionRecord({
          labels: { "app.tier": "wëb 🧪", env: "prod" },
          question: tricky,
          runtime: [tricky, null, "s"],
        });
        const { session } = await store.createSession(s, [ev("session.created", tricky)]);
        expect(session).toStrictEqual({ ...s, lastSeq: 1 });
        const turn = turnRecord(s.id, {
          input: { source: "user", text: "🧪", payload: tricky, steering: [{ source: "system" }] },
        });
        const call = toolCallRecord(s.id, turn.id, {
          input: tricky,
          output: [tricky],
          status: "completed",
        });
        const result = resultRecord(s.id, turn.id, { data: tricky });
        const message = { ...messageRecord(s.id, turn.id), content: tricky };
        const sessionResult = {
          turnId: turn.id,
          callId: call.callId,
          reportedAt: OLD,
          data: tricky,
        };
        const appended = await store.apply(s.id, {
          ops: [
            { type: "turn.insert", turn },
            { type: "message.insert", message },
            { type: "toolCall.upsert", call },
            { type: "result.insert", record: result },
            { type: "session.update", patch: { result: sessionResult } },
          ],
          events: [
            ev("a", tricky, turn.id),
            ev("b", null),
            ev("c", "text"),
            ev("d", 42),
            ev("e", []),
          ],
        });
        expect(await store.getTurn(s.id, turn.id)).toStrictEqual(turn);
        expect(await store.listMessages(s.id)).toStrictEqual([message]);
        expect(await store.getToolCall(s.id, call.callId)).toStrictEqual(call);
        expect(await store.getResult(s.id, result.resultId)).toStrictEqual(result);
        const stored = (await store.getSession(s.id))!;
        expect(stored.result).toStrictEqual(sessionResult);
        expect(stored.question).toStrictEqual(tricky);
        expect(stored.runtime).toStrictEqual([tricky, null, "s"]);
        expect(stored.labels).toStrictEqual({ "app.tier": "wëb 🧪", env: "prod" });
        const events = await store.readEvents(s.id, 0, 10);
        expect(events[0]!.data).toStrictEqual(tricky);
        expect(events.slice(1)).toStrictEqual(appended);
        expect(appended.map((e) => e.data)).toStrictEqual([tricky, null, "text", 42, []]);
      });
    });

    describe("approvals", () => {
      function approval(
        sessionId: string,
        turnId: string,
        over: Partial<ApprovalRecord> = {},
      ): ApprovalRecord {
        return {
          id: uid("apr"),
          sessionId,
          turnId,
          toolCallId: uid("call"),
          agentId: "agent_a",
          deploymentId: "dep_1",
          tool: "attach",
          input: { customerId: "c1", planId: "pro" },
          card: { title: "Move c1 to pro", facts: [{ label: "Today", value: "basic" }] },
          digest: "sha256:cc",
          status: "pending",
          decision: null,
          outcome: null,
          error: null,
          attempts: 0,
          claimedBy: null,
          claimedAt: null,
          createdAt: OLD,
          updatedAt: OLD,
          ...over,
        };
      }

      it("inserts, reads back unchanged, and lists by session and by status", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const a = approval(s.id, turn.id);
        const b = approval(s.id, turn.id, { status: "approved" });
        await store.apply(s.id, {
          ops: [
            { type: "approval.insert", approval: a },
            { type: "approval.insert", approval: b },
          ],
          events: [ev("approval.requested")],
        });
        expect(await store.getApproval(a.id)).toEqual(a);
        expect((await store.listApprovals(s.id)).map((x) => x.id)).toEqual([a.id, b.id]);
        expect((await store.listApprovalsByStatus(["approved"], 10)).map((x) => x.id)).toEqual([
          b.id,
        ]);
        expect(await store.listApprovalsByStatus([], 10)).toEqual([]);
        expect(await store.getApproval("apr_missing")).toBeUndefined();
      });

      it("updates only from an expected status, atomically with the batch", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const a = approval(s.id, turn.id);
        await store.apply(s.id, { ops: [{ type: "approval.insert", approval: a }], events: [] });
        const decision = { id: "dec_1", decidedAt: OLD, decidedBy: "ana" };
        await store.apply(s.id, {
          ops: [
            {
              type: "approval.update",
              id: a.id,
              expect: ["pending"],
              patch: { status: "approved", decision },
            },
          ],
          events: [ev("approval.decided")],
        });
        const before = await snapshot(s.id);
        // A second decision, or one for an unknown approval, is refused and writes nothing.
        for (const id of [a.id, "apr_missing"]) {
          await expectRefused(
            store.apply(s.id, {
              ops: [
                { type: "session.update", patch: { status: "running" } },
                { type: "approval.update", id, expect: ["pending"], patch: { status: "denied" } },
              ],
              events: [ev("approval.decided")],
            }),
            "approval_state",
          );
        }
        expect(await snapshot(s.id)).toStrictEqual(before);
        const read = (await store.getApproval(a.id))!;
        expect(read).toMatchObject({ status: "approved", decision });
        await store.apply(s.id, {
          ops: [
            {
              type: "approval.update",
              id: a.id,
              expect: ["approved", "unconfirmed"],
              patch: { status: "applying", attempts: 1, claimedBy: "rt_1", claimedAt: OLD },
            },
          ],
          events: [],
        });
        await store.apply(s.id, {
          ops: [
            {
              type: "approval.update",
              id: a.id,
              expect: ["applying"],
              patch: { status: "applied", outcome: { ok: 1 } },
            },
          ],
          events: [],
        });
        expect(await store.getApproval(a.id)).toMatchObject({
          status: "applied",
          outcome: { ok: 1 },
          attempts: 1,
          claimedBy: "rt_1",
        });
      });

      it("refuses a second approval for the same tool call", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id);
        const a = approval(s.id, turn.id);
        await store.apply(s.id, { ops: [{ type: "approval.insert", approval: a }], events: [] });
        await expectRefused(
          store.apply(s.id, {
            ops: [
              {
                type: "approval.insert",
                approval: approval(s.id, turn.id, { toolCallId: a.toolCallId }),
              },
            ],
            events: [],
          }),
          "duplicate",
        );
      });
    });

    describe("leases", () => {
      it("acquires a free lease, extends it for its holder and refuses others while live", async () => {
        const s = await newSession();
        const lease = (await store.acquireLease(s.id, "rt_1", 1000, T))!;
        expect(lease).toStrictEqual({ runtimeId: "rt_1", epoch: lease.epoch, expiresAt: T + 1000 });
        expect(Number.isInteger(lease.epoch)).toBe(true);
        expect((await store.getSession(s.id))!.lease).toStrictEqual(lease);
        expect(await store.acquireLease(s.id, "rt_2", 1000, T + 999)).toBeNull();
        const again = await store.acquireLease(s.id, "rt_1", 1000, T + 500);
        expect(again).toStrictEqual({ runtimeId: "rt_1", epoch: lease.epoch, expiresAt: T + 1500 });
        expect((await store.getSession(s.id))!.lease).toStrictEqual(again);
      });

      it("hands an expired lease to another runtime with the next epoch", async () => {
        const s = await newSession();
        const old = (await store.acquireLease(s.id, "rt_1", 1000, T))!;
        const taken = await store.acquireLease(s.id, "rt_2", 1000, T + 1000);
        expect(taken).toStrictEqual({
          runtimeId: "rt_2",
          epoch: old.epoch + 1,
          expiresAt: T + 2000,
        });
        expect(await store.renewLease(s.id, old, 1000, T + 1001)).toBeNull();
        await store.releaseLease(s.id, old);
        expect((await store.getSession(s.id))!.lease).toStrictEqual(taken);
        const renewed = await store.renewLease(s.id, taken!, 5000, T + 1500);
        expect(renewed).toStrictEqual({
          runtimeId: "rt_2",
          epoch: old.epoch + 1,
          expiresAt: T + 6500,
        });
        expect((await store.getSession(s.id))!.lease).toStrictEqual(renewed);
        expect(await store.renewLease("ses_missing", taken!, 1000, T)).toBeNull();
      });

      it("never renews or releases with an older epoch, even for the same runtime", async () => {
        const s = await newSession();
        const first = (await store.acquireLease(s.id, "rt_1", 1000, T))!;
        await store.acquireLease(s.id, "rt_2", 1000, T + 1000);
        const back = (await store.acquireLease(s.id, "rt_1", 1000, T + 2000))!;
        expect(back.epoch).toBe(first.epoch + 2);
        expect(await store.renewLease(s.id, first, 1000, T + 2500)).toBeNull();
        await store.releaseLease(s.id, first);
        expect((await store.getSession(s.id))!.lease).toStrictEqual(back);
        await expectRefused(
          store.apply(s.id, { fence: first, ops: [], events: [ev("x")] }),
          "stale_epoch",
        );
      });

      it("applyWithLease takes the lease and writes the batch in one step, or writes nothing", async () => {
        const s = await newSession();
        const turn = await newTurn(s.id, { status: "queued" });
        const batch: WriteBatch = {
          expectTurn: { id: turn.id, status: ["queued"] },
          ops: [{ type: "turn.update", id: turn.id, patch: { status: "running" } }],
          events: [ev("turn.started", {}, turn.id)],
        };
        const first = (await store.applyWithLease(s.id, "rt_1", 60_000, batch))!;
        expect(first.lease).toMatchObject({ runtimeId: "rt_1", epoch: 1 });
        expect(first.events.map((e) => e.type)).toEqual(["turn.started"]);
        expect((await store.getSession(s.id))!.lease).toEqual(first.lease);
        // Another runtime, while the lease is live: refused, nothing written.
        const before = await snapshot(s.id);
        const other = await store.applyWithLease(s.id, "rt_2", 60_000, {
          ops: [],
          events: [ev("x")],
        });
        expect(other).toBeNull();
        expect(await snapshot(s.id)).toStrictEqual(before);
        // The holder again: same epoch; a failing guard rolls back the lease extension too.
        await expectRefused(store.applyWithLease(s.id, "rt_1", 120_000, batch), "turn_not_active");
        expect((await store.getSession(s.id))!.lease).toEqual(first.lease);
        const again = (await store.applyWithLease(s.id, "rt_1", 60_000, {
          ops: [],
          events: [ev("y")],
        }))!;
        expect(again.lease.epoch).toBe(1);
        await expectRefused(
          store.applyWithLease("ses_missing", "rt_1", 1000, batch),
          "session_not_found",
        );
      });

      it("does not release a lease that was extended after the one given", async () => {
        const s = await newSession();
        const first = (await store.acquireLease(s.id, "rt_1", 1000, T))!;
        const extended = (await store.acquireLease(s.id, "rt_1", 1000, T + 10))!;
        expect(extended.epoch).toBe(first.epoch);
        await store.releaseLease(s.id, first);
        expect((await store.getSession(s.id))!.lease).toEqual(extended);
        expect(await store.acquireLease(s.id, "rt_2", 1000, T + 20)).toBeNull();
        await store.releaseLease(s.id, extended);
        expect((await store.acquireLease(s.id, "rt_2", 1000, T + 20))!.epoch).toBe(first.epoch + 1);
      });

      it("releases a lease keeping its epoch, so the next holder gets epoch + 1", async () => {
        const s = await newSession();
        const lease = (await store.acquireLease(s.id, "rt_1", 60_000, T))!;
        await store.releaseLease(s.id, lease);
        expect((await store.getSession(s.id))!.lease).toStrictEqual({ ...lease, expiresAt: 0 });
        const next = await store.acquireLease(s.id, "rt_2", 1000, T + 1);
        expect(next).toStrictEqual({
          runtimeId: "rt_2",
          epoch: lease.epoch + 1,
          expiresAt: T + 1001,
        });
        await expectRefused(
          store.apply(s.id, { fence: lease, ops: [], events: [ev("x")] }),
          "stale_epoch",
        );
      });

      it("refuses to lease a session that does not exist", async () => {
        await expectRefused(
          store.acquireLease("ses_missing", "rt_1", 1000, T),
          "session_not_found",
        );
      });
    });

    describe("queries", () => {
      it("lists sessions newest first with filters and stable cursor pagination", async () => {
        const X = "2024-05-01T00:00:00.000Z";
        const specs: Partial<SessionRecord>[] = [
          { id: "ses_x3", createdAt: X, labels: { env: "prod", team: "a" } },
          { id: "ses_x1", createdAt: X, labels: { env: "prod" } },
          { id: "ses_y1", createdAt: "2024-06-01T00:00:00.000Z", agentId: "agent_b" },
          { id: "ses_x4", createdAt: X, status: "ended", labels: { env: "dev", team: "a" } },
          { id: "ses_z1", createdAt: "2024-04-01T00:00:00.000Z", labels: { "app.tier": "web" } },
          { id: "ses_x2", createdAt: X, agentId: "agent_b", labels: { env: "prod", team: "a" } },
          { id: "ses_y2", createdAt: "2024-06-01T00:00:00.000Z", status: "idle" },
        ];
        for (const spec of specs) await newSession(spec);
        const order = ["ses_y2", "ses_y1", "ses_x4", "ses_x3", "ses_x2", "ses_x1", "ses_z1"];
        const ids = (rows: SessionRecord[]) => rows.map((r) => r.id);
        expect(ids(await store.listSessions({ limit: 100 }))).toEqual(order);
        const paged: string[] = [];
        let cursor: { createdAt: string; id: string } | undefined;
        for (let page = 0; page < 10; page++) {
          const rows = await store.listSessions({ limit: 2, ...(cursor ? { cursor } : {}) });
          paged.push(...ids(rows));
          if (rows.length < 2) break;
          const last = rows[rows.length - 1]!;
          cursor = { createdAt: last.createdAt, id: last.id };
        }
        expect(paged).toEqual(order);
        expect(ids(await store.listSessions({ agentId: "agent_b", limit: 100 }))).toEqual([
          "ses_y1",
          "ses_x2",
        ]);
        expect(ids(await store.listSessions({ status: "ended", limit: 100 }))).toEqual(["ses_x4"]);
        expect(ids(await store.listSessions({ labels: { env: "prod" }, limit: 100 }))).toEqual([
          "ses_x3",
          "ses_x2",
          "ses_x1",
        ]);
        expect(
          ids(await store.listSessions({ labels: { env: "prod", team: "a" }, limit: 100 })),
        ).toEqual(["ses_x3", "ses_x2"]);
        expect(
          ids(await store.listSessions({ labels: { "app.tier": "web" }, limit: 100 })),
        ).toEqual(["ses_z1"]);
        expect(ids(await store.listSessions({ labels: { env: "staging" }, limit: 100 }))).toEqual(
          [],
        );
        expect(
          ids(
            await store.listSessions({
              labels: { team: "a" },
              cursor: { createdAt: X, id: "ses_x3" },
              limit: 100,
            }),
          ),
        ).toEqual(["ses_x2"]);
        expect(
          ids(await store.listSessions({ agentId: "agent_b", status: "idle", limit: 100 })),
        ).toEqual([]);
      });

      it("lists recoverable sessions: queued or running work and no live lease", async () => {
        const make = async (
          turnStatus: TurnRecord["status"] | null,
          over: Partial<SessionRecord> = {},
        ) => {
          const s = await newSession(over);
          if (turnStatus !== null) await newTurn(s.id, { status: turnStatus });
          return s.id;
        };
        const queued = await make("queued");
        const leased = await make("running");
        await store.acquireLease(leased, "rt_1", 1000, T);
        const settled = await make("completed");
        const ended = await make("queued", { status: "ended" });
        const idle = await make(null);
        const released = await make("running");
        await store.releaseLease(
          released,
          (await store.acquireLease(released, "rt_1", 60_000, T))!,
        );
        await newTurn(settled, { status: "cancelled" });
        expect(idle).toBeTruthy();
        expect(ended).toBeTruthy();
        const at = async (now: number) => (await store.listRecoverableSessions(now)).sort();
        expect(await at(T + 500)).toEqual([queued, released].sort());
        expect(await at(T + 1000)).toEqual([queued, leased, released].sort());
      });
    });
  });
}
