import type { Store } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import { expectRefused } from "./assertions.ts";
import type { SuiteContext } from "./context.ts";
import { ev, messageRecord, resultRecord, turnRecord } from "./fixtures.ts";

export function uniquenessSection(c: SuiteContext): void {
  describe("uniqueness", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn, snapshot, fullBatch } = c;
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
}
