import type { Store } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import { expectRefused } from "./assertions.ts";
import type { SuiteContext } from "./context.ts";
import { ev, T, toolCallRecord } from "./fixtures.ts";

export function guardsSection(c: SuiteContext): void {
  describe("guards", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn, snapshot, fullBatch } = c;
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
}
