import type { Store, ToolCallRecord } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import type { SuiteContext } from "./context.ts";
import {
  ev,
  messageRecord,
  OLD,
  resultRecord,
  sessionRecord,
  toolCallRecord,
  turnRecord,
} from "./fixtures.ts";

export function recordsSection(c: SuiteContext): void {
  describe("records", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn } = c;
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

    it("lists the active turns (queued and running) in insertion order, and only them", async () => {
      const s = await newSession();
      expect(await store.listActiveTurns(s.id)).toEqual([]);
      const t1 = await newTurn(s.id, { id: "turn_1" });
      const t2 = await newTurn(s.id, { id: "turn_2" });
      const t3 = await newTurn(s.id, { id: "turn_3" });
      const t4 = await newTurn(s.id, { id: "turn_4" });
      await store.apply(s.id, {
        ops: [
          { type: "turn.update", id: t1.id, patch: { status: "completed", outcome: "completed" } },
          { type: "turn.update", id: t2.id, patch: { status: "running" } },
          {
            type: "turn.update",
            id: t3.id,
            patch: { status: "cancelled", outcome: "interrupted" },
          },
        ],
        events: [],
      });
      const active = await store.listActiveTurns(s.id);
      expect(active.map((t) => [t.id, t.status])).toEqual([
        ["turn_2", "running"],
        ["turn_4", "queued"],
      ]);
      // The same records listTurns gives.
      const all = await store.listTurns(s.id);
      expect(active).toStrictEqual(all.filter((t) => t.id === t2.id || t.id === t4.id));
      expect(t4.status).toBe("queued");
      await store.apply(s.id, {
        ops: [{ type: "turn.update", id: t2.id, patch: { status: "failed", outcome: "failed" } }],
        events: [],
      });
      expect((await store.listActiveTurns(s.id)).map((t) => t.id)).toEqual(["turn_4"]);
      expect(await store.listActiveTurns("ses_missing")).toEqual([]);
    });

    it("reads the session with its active turns in one call, as the two reads give them", async () => {
      const s = await newSession();
      expect(await store.getSessionWithActiveTurns(s.id)).toStrictEqual({
        session: await store.getSession(s.id),
        activeTurns: [],
      });
      const t1 = await newTurn(s.id, { id: "turn_1" });
      await newTurn(s.id, { id: "turn_2", input: { source: "user", text: "nul \u0000 and ✓" } });
      await newTurn(s.id, { id: "turn_3" });
      await store.apply(s.id, {
        ops: [
          { type: "turn.update", id: t1.id, patch: { status: "completed", outcome: "completed" } },
          { type: "turn.update", id: "turn_3", patch: { status: "running", steps: 2 } },
        ],
        events: [],
      });
      const read = await store.getSessionWithActiveTurns(s.id);
      expect(read?.activeTurns.map((t) => [t.id, t.status])).toEqual([
        ["turn_2", "queued"],
        ["turn_3", "running"],
      ]);
      expect(read).toStrictEqual({
        session: await store.getSession(s.id),
        activeTurns: await store.listActiveTurns(s.id),
      });
      expect(await store.getSessionWithActiveTurns("ses_missing")).toBeUndefined();
    });

    it("finds the turn settled last, by settledAt then insertion, not counting steered ones", async () => {
      const s = await newSession();
      expect(await store.lastSettledTurn(s.id)).toBeUndefined();
      const [t1, t2, t3, t4] = [
        await newTurn(s.id, { id: "turn_1" }),
        await newTurn(s.id, { id: "turn_2" }),
        await newTurn(s.id, { id: "turn_3" }),
        await newTurn(s.id, { id: "turn_4" }),
      ];
      const settle = (id: string, at: string, outcome: string) => ({
        type: "turn.update" as const,
        id,
        patch: { status: "completed" as const, outcome, settledAt: at },
      });
      // turn_2 (inserted later) settled before turn_1, as after an interrupt-mode turn.
      await store.apply(s.id, {
        ops: [
          settle(t2!.id, "2024-01-01T00:00:01.000Z", "completed"),
          settle(t1!.id, "2024-01-01T00:00:02.000Z", "completed"),
        ],
        events: [],
      });
      expect((await store.lastSettledTurn(s.id))?.id).toBe("turn_1");
      // A steered turn is folded into another: never the last settled one.
      await store.apply(s.id, {
        ops: [settle(t3!.id, "2024-01-01T00:00:09.000Z", "steered")],
        events: [],
      });
      expect((await store.lastSettledTurn(s.id))?.id).toBe("turn_1");
      // The same settledAt: the later inserted wins. The record is the full one.
      await store.apply(s.id, {
        ops: [settle(t4!.id, "2024-01-01T00:00:02.000Z", "completed")],
        events: [],
      });
      const last = await store.lastSettledTurn(s.id);
      expect(last).toStrictEqual((await store.listTurns(s.id)).find((t) => t.id === "turn_4"));
      expect(await store.lastSettledTurn("ses_missing")).toBeUndefined();
    });

    it("finds the first turn by insertion order", async () => {
      const s = await newSession();
      expect(await store.firstTurn(s.id)).toBeUndefined();
      await newTurn(s.id, { id: "turn_b" });
      await newTurn(s.id, { id: "turn_a" });
      const first = await store.firstTurn(s.id);
      expect(first).toStrictEqual((await store.listTurns(s.id))[0]);
      expect(first?.id).toBe("turn_b");
      expect(await store.firstTurn("ses_missing")).toBeUndefined();
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

    it("applies several turn.update ops of one batch in order", async () => {
      const s = await newSession();
      const a = await newTurn(s.id, { id: "turn_a" });
      const b = await newTurn(s.id, { id: "turn_b" });
      await store.apply(s.id, {
        ops: [
          // A last step's count, then the settlement: later fields win, an undefined one
          // clears nothing.
          { type: "turn.update", id: a.id, patch: { status: "running", steps: 2 } },
          {
            type: "turn.update",
            id: a.id,
            patch: { status: "completed", outcome: "done", steps: undefined },
          },
          { type: "turn.update", id: b.id, patch: { status: "running" } },
          { type: "turn.update", id: a.id, patch: { settledAt: "2026-01-01T00:00:00.000Z" } },
          { type: "turn.update", id: b.id, patch: { steps: 7 } },
        ],
        events: [],
      });
      expect(await store.getTurn(s.id, a.id)).toMatchObject({
        status: "completed",
        outcome: "done",
        steps: 2,
        settledAt: "2026-01-01T00:00:00.000Z",
      });
      expect(await store.getTurn(s.id, b.id)).toMatchObject({ status: "running", steps: 7 });
      // A missing turn in the middle of a run of updates still refuses the whole batch.
      await expect(
        store.apply(s.id, {
          ops: [
            { type: "turn.update", id: a.id, patch: { steps: 9 } },
            { type: "turn.update", id: "turn_missing", patch: { steps: 1 } },
          ],
          events: [],
        }),
      ).rejects.toMatchObject({ code: "turn_not_active" });
      expect((await store.getTurn(s.id, a.id))!.steps).toBe(2);
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
      expect(await store.listResults(s.id, { after: "res_c", limit: 10 })).toStrictEqual([ra, rb]);
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
}
