import type { Store } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import { expectRefused } from "./assertions.ts";
import type { SuiteContext } from "./context.ts";
import { ev, T } from "./fixtures.ts";

/** listLeaseHolders and expireLeasesOf: taking a dead holder's sessions before its leases expire. */
export function deadHoldersSection(c: SuiteContext): void {
  describe("dead lease holders", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn } = c;

    it("lists the holders of live leases on sessions with queued or running work", async () => {
      const working = await newSession();
      await newTurn(working.id, { status: "running" });
      await store.acquireLease(working.id, "rt_dh_work", 1000, T);
      const idle = await newSession();
      await newTurn(idle.id, { status: "completed" });
      await store.acquireLease(idle.id, "rt_dh_idle", 1000, T);
      const mine = (await store.listLeaseHolders(T + 500)).filter((h) => h.startsWith("rt_dh_"));
      expect(mine).toEqual(["rt_dh_work"]);
      expect(
        (await store.listLeaseHolders(T + 1000)).filter((h) => h.startsWith("rt_dh_")),
      ).toEqual([]);
    });

    it("expires only the named holder's leases; the next holder gets epoch + 1", async () => {
      const dead = await newSession();
      await newTurn(dead.id, { status: "running" });
      const old = (await store.acquireLease(dead.id, "rt_dh_dead", 60_000, T))!;
      const live = await newSession();
      await newTurn(live.id, { status: "queued" });
      const kept = (await store.acquireLease(live.id, "rt_dh_live", 60_000, T))!;

      expect(await store.expireLeasesOf("rt_dh_dead")).toEqual([dead.id]);
      expect((await store.getSession(dead.id))!.lease).toStrictEqual({ ...old, expiresAt: 0 });
      expect((await store.getSession(live.id))!.lease).toStrictEqual(kept);
      expect(await store.listRecoverableSessions(T + 1)).toContain(dead.id);
      expect(await store.listRecoverableSessions(T + 1)).not.toContain(live.id);
      // Nothing left to expire: a second call (another runtime racing) changes nothing.
      expect(await store.expireLeasesOf("rt_dh_dead")).toEqual([]);

      const taken = (await store.acquireLease(dead.id, "rt_dh_next", 1000, T + 2))!;
      expect(taken.epoch).toBe(old.epoch + 1);
      // The dead holder's late writes, renewals and releases are refused or change nothing.
      await expectRefused(
        store.apply(dead.id, { fence: old, ops: [], events: [ev("x")] }),
        "stale_epoch",
      );
      expect(await store.renewLease(dead.id, old, 1000, T + 3)).toBeNull();
      expect((await store.getSession(dead.id))!.lease).toStrictEqual(taken);
      // The new holder is not named by the old one: expiring the dead one again leaves it.
      expect(await store.expireLeasesOf("rt_dh_dead")).toEqual([]);
      expect((await store.getSession(dead.id))!.lease).toStrictEqual(taken);
    });
  });
}
