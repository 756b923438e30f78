import type { Store } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import { expectRefused } from "./assertions.ts";
import type { SuiteContext } from "./context.ts";
import { ev, messageRecord, T, turnRecord } from "./fixtures.ts";

export function eventLogSection(c: SuiteContext): void {
  describe("apply and the event log", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn } = c;
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
}
