import type { Store, WriteBatch } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import { expectRefused } from "./assertions.ts";
import type { SuiteContext } from "./context.ts";
import { ev, T } from "./fixtures.ts";

export function leasesSection(c: SuiteContext): void {
  describe("leases", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn, snapshot } = c;
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
      await expectRefused(store.acquireLease("ses_missing", "rt_1", 1000, T), "session_not_found");
    });
  });
}
