// The DeliveryStore contract as tests, run by each store from its own test file on a fresh
// database per test. Events are written through the store's own `Store.apply`, so the outbox
// trigger is exercised exactly as the engine does; the races the port decides (one delivery per
// subscription and event, one claim per delivery) are run concurrently.
import type {
  DeliveryStore,
  EventSubscriptionRow,
  NewDelivery,
  Store,
} from "@opencomputer/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createdEvents,
  ev,
  messageRecord,
  sessionRecord,
  turnRecord,
} from "./store-conformance/fixtures.ts";

export interface DeliveryStoreFixture {
  store: Store;
  deliveries: DeliveryStore;
  close(): Promise<void>;
}

let counter = 0;
const next = (prefix: string) =>
  `${prefix}_${process.pid}_${(++counter).toString().padStart(6, "0")}`;
const AT = "2026-03-02T17:00:00.000Z";

export function subscriptionRow(over: Partial<EventSubscriptionRow> = {}): EventSubscriptionRow {
  return {
    id: next("evs"),
    projectId: "default",
    environment: "production",
    agentId: null,
    events: ["turn.completed", "turn.failed", "turn.cancelled"],
    destination: { type: "https", url: "https://receiver.example/oc?x=1" },
    status: "active",
    secret: "ocsec_current",
    previousSecret: null,
    previousSecretUntil: null,
    createdAt: AT,
    updatedAt: AT,
    secretRotatedAt: null,
    ...over,
  };
}

function delivery(subscriptionId: string, over: Partial<NewDelivery> = {}): NewDelivery {
  return {
    id: next("dlv"),
    subscriptionId,
    eventId: next("evt"),
    eventType: "turn.completed",
    sequence: 5,
    occurredAt: AT,
    projectId: "default",
    environment: "production",
    agentId: "agent_a",
    deploymentId: "dep_1",
    sessionId: "ses_1",
    turnId: "turn_1",
    data: { status: "completed", result: { text: "ok", truncated: false } },
    replayOf: null,
    createdAt: AT,
    nextAttemptMs: 1_000,
    ...over,
  };
}

export function deliveryStoreConformance(
  name: string,
  open: () => Promise<DeliveryStoreFixture>,
): void {
  describe(`DeliveryStore conformance: ${name}`, () => {
    let f: DeliveryStoreFixture;
    let d: DeliveryStore;
    beforeEach(async () => {
      f = await open();
      d = f.deliveries;
    });
    afterEach(async () => {
      await f.close();
    });

    /** A session with one turn that settles with `type`; returns the session and turn ids. */
    async function settledTurn(type: string, data: unknown, agentId = "agent_a") {
      const s = sessionRecord({ agentId });
      await f.store.createSession(s, createdEvents(s));
      const turn = turnRecord(s.id);
      await f.store.apply(s.id, { ops: [{ type: "turn.insert", turn }], events: [] });
      const message = {
        ...messageRecord(s.id, turn.id),
        content: [{ type: "text", text: "Done." }],
      };
      await f.store.apply(s.id, {
        ops: [{ type: "message.insert", message } as never],
        events: [ev("message.completed", {}, turn.id), ev(type, data, turn.id)],
      });
      return { sessionId: s.id, turnId: turn.id };
    }

    it("puts nothing in the outbox while no subscription exists", async () => {
      await settledTurn("turn.completed", { outcome: "completed" });
      expect(await d.outbox(10)).toEqual([]);
    });

    it("records each delivered event type in the outbox with its session's origin", async () => {
      await d.createSubscription(subscriptionRow());
      const a = await settledTurn("turn.completed", { outcome: "completed" });
      await settledTurn("turn.failed", { code: "model_unavailable", message: "down" });
      await settledTurn("turn.cancelled", { reason: "interrupted" }, "agent_b");
      const rows = await d.outbox(10);
      expect(rows.map((r) => r.type)).toEqual(["turn.completed", "turn.failed", "turn.cancelled"]);
      expect(rows[0]).toMatchObject({
        sessionId: a.sessionId,
        turnId: a.turnId,
        projectId: "default",
        environment: "production",
        agentId: "agent_a",
        deploymentId: "dep_1",
        data: { outcome: "completed" },
      });
      expect(rows[0]!.sequence).toBeGreaterThan(1);
      expect(rows[2]!.agentId).toBe("agent_b");
      expect(await d.turnResultText(a.sessionId, a.turnId)).toBe("Done.");
      await d.removeOutbox(rows[0]!.rid);
      expect((await d.outbox(10)).map((r) => r.type)).toEqual(["turn.failed", "turn.cancelled"]);
    });

    it("matches subscriptions by project, environment, agent and event type", async () => {
      const all = subscriptionRow();
      const onlyB = subscriptionRow({ agentId: "agent_b" });
      const onlyFailed = subscriptionRow({ events: ["turn.failed"] });
      const dev = subscriptionRow({ environment: "development" });
      const other = subscriptionRow({ projectId: "other" });
      for (const s of [all, onlyB, onlyFailed, dev, other]) await d.createSubscription(s);
      await settledTurn("turn.completed", { outcome: "completed" });
      const [event] = await d.outbox(1);
      const matched = await d.matchingSubscriptions(event!);
      expect(matched.map((s) => s.id)).toEqual([all.id]);
      expect(matched[0]).toStrictEqual(all);
    });

    it("records one delivery per subscription and event, however many fan out at once", async () => {
      const sub = subscriptionRow();
      await d.createSubscription(sub);
      const base = delivery(sub.id);
      const inserted = await Promise.all(
        Array.from({ length: 20 }, () => d.insertDelivery({ ...base, id: next("dlv") })),
      );
      expect(inserted.filter(Boolean)).toHaveLength(1);
      const replay = { ...base, id: next("dlv"), replayOf: "dlv_original" };
      expect(await d.insertDelivery(replay)).toBe(true);
      const list = await d.listDeliveries({ subscriptionId: sub.id, limit: 50 });
      expect(list).toHaveLength(2);
      expect(list[0]).toMatchObject({ status: "pending", attempt: 0, eventId: base.eventId });
      expect(list[0]!.data).toStrictEqual(base.data);
    });

    it("claims each due delivery once among concurrent claimers, and takes over lapsed claims", async () => {
      const sub = subscriptionRow();
      await d.createSubscription(sub);
      for (let i = 0; i < 5; i++) await d.insertDelivery(delivery(sub.id));
      const later = delivery(sub.id, { nextAttemptMs: 9_000 });
      await d.insertDelivery(later);
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) => d.claimDue(`p${i}`, 2_000, 5_000, 10, 10)),
      );
      const ids = claims.flat().map((r) => r.id);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
      expect(ids).not.toContain(later.id);
      for (const r of claims.flat()) expect(r.attempt).toBe(1);
      expect(await d.claimDue("late", 4_000, 8_000, 10, 10)).toEqual([]);
      const taken = await d.claimDue("late", 6_000, 9_000, 10, 10);
      expect(taken).toHaveLength(5);
      for (const r of taken) expect(r).toMatchObject({ attempt: 2, claimedBy: "late" });
      const first = claims.flat()[0]!;
      const outcome = {
        status: "delivered" as const,
        responseStatus: 200,
        error: null,
        lastAttemptAt: AT,
        deliveredAt: AT,
        nextAttemptMs: null,
      };
      expect(await d.finishAttempt(first.id, first.claimedBy!, outcome)).toBe(false);
      expect(await d.finishAttempt(first.id, "late", outcome)).toBe(true);
      expect(await d.getDelivery(first.id)).toMatchObject({
        status: "delivered",
        responseStatus: 200,
        deliveredAt: AT,
        nextAttemptAt: null,
        claimedBy: null,
      });
    });

    it("keeps each subscription to its share of live claims", async () => {
      const slow = subscriptionRow();
      const other = subscriptionRow();
      await d.createSubscription(slow);
      await d.createSubscription(other);
      for (let i = 0; i < 6; i++) await d.insertDelivery(delivery(slow.id));
      const waiting = delivery(other.id, { nextAttemptMs: 1_500 });
      await d.insertDelivery(waiting);
      const first = await d.claimDue("p", 2_000, 9_000, 10, 2);
      const bySub = (rows: { subscriptionId: string }[], id: string) =>
        rows.filter((r) => r.subscriptionId === id).length;
      expect(bySub(first, slow.id)).toBe(2);
      expect(bySub(first, other.id)).toBe(1);
      expect(await d.claimDue("q", 3_000, 9_000, 10, 2)).toEqual([]);
      const again = await d.claimDue("q", 3_000, 9_000, 10, 4);
      expect(bySub(again, slow.id)).toBe(2);
    });

    it("holds a paused subscription's deliveries and releases them on resume", async () => {
      const sub = subscriptionRow({ status: "paused" });
      await d.createSubscription(sub);
      const held = delivery(sub.id, { nextAttemptMs: 50_000 });
      await d.insertDelivery(held);
      expect(await d.claimDue("p", 60_000, 70_000, 10, 10)).toEqual([]);
      expect(await d.updateSubscription(sub.id, { status: "active", updatedAt: AT })).toBe(true);
      expect(await d.rescheduleHeld(sub.id, 10_000)).toBe(1);
      expect((await d.claimDue("p", 10_000, 20_000, 10, 10)).map((r) => r.id)).toEqual([held.id]);
    });

    it("rotates secrets and fails pending deliveries when the subscription is deleted", async () => {
      const sub = subscriptionRow();
      await d.createSubscription(sub);
      await d.updateSubscription(sub.id, {
        secret: "ocsec_new",
        previousSecret: sub.secret,
        previousSecretUntil: 86_400_000,
        secretRotatedAt: AT,
        updatedAt: AT,
      });
      expect(await d.getSubscription(sub.id)).toMatchObject({
        secret: "ocsec_new",
        previousSecret: "ocsec_current",
        previousSecretUntil: 86_400_000,
        secretRotatedAt: AT,
      });
      const pending = delivery(sub.id);
      await d.insertDelivery(pending);
      expect(await d.deleteSubscription(sub.id, AT)).toBe(true);
      expect(await d.getSubscription(sub.id)).toBeNull();
      expect(await d.getDelivery(pending.id)).toMatchObject({
        status: "failed",
        error: "subscription_deleted",
      });
      expect(await d.deleteSubscription(sub.id, AT)).toBe(false);
      expect(await d.updateSubscription(sub.id, { status: "paused", updatedAt: AT })).toBe(false);
    });

    it("lists by status and session with a cursor, and selects for replay", async () => {
      const sub = subscriptionRow();
      await d.createSubscription(sub);
      const rows = Array.from({ length: 5 }, (_, i) =>
        delivery(sub.id, {
          sessionId: i < 3 ? "ses_a" : "ses_b",
          sequence: 10 + i,
          occurredAt: `2026-03-02T17:0${i}:00.000Z`,
        }),
      );
      for (const r of rows) await d.insertDelivery(r);
      const page1 = await d.listDeliveries({ subscriptionId: sub.id, limit: 2 });
      const page2 = await d.listDeliveries({
        subscriptionId: sub.id,
        limit: 10,
        after: page1[1]!.id,
      });
      expect([...page1, ...page2].map((r) => r.id)).toEqual(rows.map((r) => r.id));
      const bySession = await d.listDeliveries({
        subscriptionId: sub.id,
        sessionId: "ses_b",
        limit: 10,
      });
      expect(bySession.map((r) => r.id)).toEqual([rows[3]!.id, rows[4]!.id]);
      expect(
        await d.listDeliveries({ subscriptionId: sub.id, status: "failed", limit: 10 }),
      ).toEqual([]);
      const range = await d.selectForReplay(sub.id, {
        sessionId: "ses_a",
        fromSequence: 11,
        toSequence: 12,
        limit: 100,
      });
      expect(range.map((r) => r.sequence)).toEqual([11, 12]);
      const window = await d.selectForReplay(sub.id, {
        since: "2026-03-02T17:01:00.000Z",
        until: "2026-03-02T17:03:00.000Z",
        limit: 100,
      });
      expect(window.map((r) => r.sequence)).toEqual([11, 12]);
      const byId = await d.selectForReplay(sub.id, {
        deliveryIds: [rows[4]!.id, "dlv_none"],
        limit: 100,
      });
      expect(byId.map((r) => r.id)).toEqual([rows[4]!.id]);
      expect(
        await d.selectForReplay("evs_other", { deliveryIds: [rows[4]!.id], limit: 100 }),
      ).toEqual([]);
    });
  });
}
