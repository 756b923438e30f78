// Event delivery end to end on the embedded store: a turn's end committed through the store,
// the outbox trigger, fan-out, signed POSTs to a real loopback receiver, retries on an
// injectable clock, and the delivery records — checked as a receiver checks them, with
// @opencomputer/event-receiver.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEventDelivery, verifyEventDelivery } from "@opencomputer/event-receiver";
import {
  createSqliteDeliveryStore,
  createSqliteStore,
  type SqliteStore,
} from "@opencomputer/store-sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  EventDispatcher,
  EventSubscriptions,
  MAX_ATTEMPTS,
  ROTATION_OVERLAP_MS,
} from "../src/index.ts";
import { type Received, startReceiver, type TestReceiver } from "./receiver.ts";
import { settleTurn } from "./settle.ts";

let dir: string;
let store: SqliteStore;
let receiver: TestReceiver;
let now: number;
let subs: EventSubscriptions;
let dispatcher: EventDispatcher;
const clock = () => now;
const deliveries = () => createSqliteDeliveryStore(store);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "oc-event-delivery-"));
  store = createSqliteStore({ path: join(dir, "store.db") });
  receiver = await startReceiver();
  now = Date.parse("2026-09-25T00:00:00.000Z");
  subs = new EventSubscriptions({ store: deliveries(), clock, allowLoopbackHttp: true });
  dispatcher = new EventDispatcher({
    store: deliveries(),
    holder: "rt_test",
    clock,
    // Long enough for a loaded machine to answer; only the scripted hang reaches it.
    timeoutMs: 1_000,
  });
});

afterEach(async () => {
  await dispatcher.stop();
  await receiver.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function subscribe(over: Record<string, unknown> = {}) {
  return subs.create({
    projectId: "default",
    environment: "production",
    events: ["turn.completed", "turn.failed", "turn.cancelled"],
    destination: { type: "https", url: receiver.url },
    ...over,
  });
}

/** Checks a request as a receiver does: signature under `secrets` at the sender's clock. */
async function authentic(r: Received, secrets: string | string[]) {
  return verifyEventDelivery({
    secret: secrets,
    headers: r.headers as Record<string, string>,
    method: r.method,
    path: r.path,
    body: r.body,
    now: Math.floor(now / 1000),
  });
}

const list = async (subscriptionId: string) =>
  (await subs.deliveries(subscriptionId, "default", {})).deliveries;

describe("event delivery", () => {
  it("retries through a 500, a timeout and a 429 with Retry-After, then delivers once, signed", async () => {
    const { subscription, signingSecret } = await subscribe();
    const turn = await settleTurn(store, "turn.completed");
    receiver.script(
      { status: 500 },
      { hang: true },
      { status: 429, headers: { "retry-after": "7" } },
    );

    expect(await dispatcher.runOnce()).toBe(1);
    let [d] = await list(subscription.id);
    expect(d).toMatchObject({
      status: "pending",
      attempt: 1,
      responseStatus: 500,
      error: "http_500",
    });
    expect(d!.nextAttemptAt).toBe(new Date(now + 5_000).toISOString());

    now += 4_999;
    expect(await dispatcher.runOnce()).toBe(0);
    now += 1;
    await dispatcher.runOnce();
    [d] = await list(subscription.id);
    expect(d).toMatchObject({
      status: "pending",
      attempt: 2,
      responseStatus: null,
      error: "timeout",
    });
    expect(d!.nextAttemptAt).toBe(new Date(now + 30_000).toISOString());

    now += 30_000;
    await dispatcher.runOnce();
    [d] = await list(subscription.id);
    expect(d).toMatchObject({ attempt: 3, responseStatus: 429, error: "http_429" });
    expect(d!.nextAttemptAt).toBe(new Date(now + 7_000).toISOString());

    now += 7_000;
    await dispatcher.runOnce();
    [d] = await list(subscription.id);
    expect(d).toMatchObject({
      status: "delivered",
      attempt: 4,
      responseStatus: 200,
      error: null,
      deliveredAt: new Date(now).toISOString(),
      nextAttemptAt: null,
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      eventType: "turn.completed",
    });
    expect(receiver.received).toHaveLength(4);
    const attempts = new Set(receiver.received.map((r) => r.headers["x-oc-delivery-attempt"]));
    expect(attempts).toEqual(new Set([1, 2, 3, 4].map((n) => `${d!.id}:${n}`)));
    const last = receiver.received[3]!;
    expect(await authentic(last, signingSecret)).toBe(true);
    expect(await authentic(last, "ocsec_wrong")).toBe(false);
    expect(await authentic({ ...last, body: `${last.body} ` }, signingSecret)).toBe(false);
    expect(last.path).toBe("/oc/events?tenant=acme");
    expect(last.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": "opencomputer-event-delivery/1",
      "x-oc-delivery-id": d!.id,
      "x-oc-event-id": d!.eventId,
      "x-oc-event-type": "turn.completed",
    });
    const body = parseEventDelivery(last.body);
    expect(body).toStrictEqual({
      schema: "opencomputer.event-delivery/v1",
      deliveryId: d!.id,
      eventId: d!.eventId,
      sequence: d!.sequence,
      occurredAt: d!.occurredAt,
      projectId: "default",
      environment: "production",
      agentId: "agent_a",
      deploymentId: "dep_1",
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      type: "turn.completed",
      data: { status: "completed", result: { text: "Done: 3 flags removed.", truncated: false } },
    });
    // Every attempt carries the same body; a delivered one is never posted again.
    for (const r of receiver.received) expect(r.body).toBe(last.body);
    now += 3_600_000;
    expect(await dispatcher.runOnce()).toBe(0);
    expect(receiver.received).toHaveLength(4);
  });

  it("records 4xx and 3xx answers as permanent failures, following no redirect", async () => {
    const { subscription } = await subscribe();
    receiver.script(
      { status: 400 },
      { status: 302, headers: { location: `${receiver.url}&redirected=1` } },
    );
    await settleTurn(store, "turn.failed");
    await settleTurn(store, "turn.cancelled");
    await dispatcher.runOnce();
    now += 3_600_000;
    expect(await dispatcher.runOnce()).toBe(0);
    const records = await list(subscription.id);
    expect(records.map((r) => [r.status, r.error, r.attempt]).sort()).toEqual([
      ["failed", "http_400", 1],
      ["failed", "redirect", 1],
    ]);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received.some((r) => r.path.includes("redirected"))).toBe(false);
    const bodies = receiver.received.map((r) => parseEventDelivery(r.body)!);
    const failed = bodies.find((b) => b.type === "turn.failed")!;
    expect(failed.data).toStrictEqual({
      status: "failed",
      error: "model_unavailable: The model provider did not answer.",
    });
    const cancelled = bodies.find((b) => b.type === "turn.cancelled")!;
    expect(cancelled.data).toStrictEqual({ status: "cancelled", reason: "interrupted" });
  });

  it("gives up after 10 attempts on the documented schedule", async () => {
    const { subscription } = await subscribe();
    receiver.script(...Array.from({ length: MAX_ATTEMPTS }, () => ({ status: 503 })));
    await settleTurn(store, "turn.completed");
    const waits: number[] = [];
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await dispatcher.runOnce();
      const [d] = await list(subscription.id);
      if (d!.nextAttemptAt === null) break;
      const wait = Date.parse(d!.nextAttemptAt) - now;
      waits.push(wait);
      now += wait;
    }
    expect(waits).toEqual([5, 30, 120, 600, 1800, 3600, 3600, 3600, 3600].map((s) => s * 1000));
    const [d] = await list(subscription.id);
    expect(d).toMatchObject({
      status: "failed",
      attempt: 10,
      error: "retry_exhausted: http_503",
      nextAttemptAt: null,
    });
    expect(receiver.received).toHaveLength(10);
  });

  it("lets a slow receiver's backlog hold up no other subscription's delivery", async () => {
    const slow = await startReceiver("/slow");
    try {
      const hanging = await subscribe({ destination: { type: "https", url: slow.url } });
      const quick = await subscribe({ events: ["turn.failed"] });
      slow.script({ hang: true }, { hang: true });
      // Three slots in this process, at most two per subscription: the slow receiver's backlog
      // of five gets two, and the quick subscription's delivery (recorded last) the third.
      dispatcher = new EventDispatcher({
        store: deliveries(),
        holder: "rt_test",
        clock,
        timeoutMs: 60_000,
        maxInFlight: 3,
        perSubscription: 2,
      });
      for (let i = 0; i < 4; i++) await settleTurn(store, "turn.completed");
      await settleTurn(store, "turn.failed");
      await dispatcher.fanOut();
      const started = await dispatcher.launchDue();
      expect(started).toHaveLength(3);
      await expect
        .poll(async () => (await list(quick.subscription.id))[0]!.status)
        .toBe("delivered");
      expect(slow.received).toHaveLength(2);
      const held = await list(hanging.subscription.id);
      expect(held.map((d) => d.status)).toEqual(Array(5).fill("pending"));
      expect(held.filter((d) => d.attempt === 1)).toHaveLength(2);
      slow.release();
      await Promise.all(started);
      await dispatcher.runOnce();
      await dispatcher.runOnce();
      expect((await list(hanging.subscription.id)).map((d) => d.status)).toEqual(
        Array(5).fill("delivered"),
      );
    } finally {
      await slow.close();
    }
  });

  it("signs with both secrets for 24 hours after a rotation, then with the new one", async () => {
    const { subscription, signingSecret: old } = await subscribe();
    const rotated = await subs.rotateSecret(subscription.id, "default");
    expect(rotated.signingSecret).not.toBe(old);
    expect(rotated.subscription.secretRotatedAt).toBe(new Date(now).toISOString());
    await settleTurn(store, "turn.completed");
    await dispatcher.runOnce();
    const during = receiver.received[0]!;
    expect(String(during.headers["x-oc-signature"]).split(",")).toHaveLength(2);
    expect(await authentic(during, old)).toBe(true);
    expect(await authentic(during, rotated.signingSecret)).toBe(true);

    now += ROTATION_OVERLAP_MS;
    await settleTurn(store, "turn.completed");
    await dispatcher.runOnce();
    const after = receiver.received[1]!;
    expect(String(after.headers["x-oc-signature"]).split(",")).toHaveLength(1);
    expect(await authentic(after, old)).toBe(false);
    expect(await authentic(after, [old, rotated.signingSecret])).toBe(true);
  });

  it("holds deliveries while paused and posts them on resume", async () => {
    const { subscription } = await subscribe();
    expect((await subs.setStatus(subscription.id, "default", "paused")).status).toBe("paused");
    await settleTurn(store, "turn.completed");
    await settleTurn(store, "turn.failed");
    now += 60_000;
    expect(await dispatcher.runOnce()).toBe(0);
    expect((await list(subscription.id)).map((d) => d.status)).toEqual(["pending", "pending"]);
    expect(receiver.received).toHaveLength(0);
    await subs.setStatus(subscription.id, "default", "active");
    expect(await dispatcher.runOnce()).toBe(2);
    expect((await list(subscription.id)).map((d) => d.status)).toEqual(["delivered", "delivered"]);
  });

  it("replays a delivery as a new record carrying the same event", async () => {
    const { subscription, signingSecret } = await subscribe();
    const turn = await settleTurn(store, "turn.completed");
    await dispatcher.runOnce();
    const [original] = await list(subscription.id);
    const replayed = await subs.replay(subscription.id, "default", {
      deliveryIds: [original!.id],
    });
    expect(replayed).toHaveLength(1);
    expect(replayed[0]).toMatchObject({
      status: "pending",
      attempt: 0,
      replayOf: original!.id,
      eventId: original!.eventId,
    });
    expect(replayed[0]!.id).not.toBe(original!.id);
    await dispatcher.runOnce();
    const second = receiver.received[1]!;
    expect(await authentic(second, signingSecret)).toBe(true);
    expect(parseEventDelivery(second.body)).toMatchObject({
      deliveryId: replayed[0]!.id,
      eventId: original!.eventId,
      replayOf: original!.id,
    });
    const bySession = await subs.replay(subscription.id, "default", {
      sessionId: turn.sessionId,
      fromSequence: 0,
    });
    expect(bySession.map((r) => r.replayOf)).toEqual([original!.id, original!.id]);
    const page = await subs.deliveries(subscription.id, "default", { limit: "2" });
    expect(page.deliveries).toHaveLength(2);
    const rest = await subs.deliveries(subscription.id, "default", { after: page.nextCursor! });
    expect(rest.deliveries).toHaveLength(2);
    expect(rest.nextCursor).toBeUndefined();
  });

  it("delivers only to subscriptions of the event's environment, agent and type", async () => {
    const onlyB = await subscribe({ agentId: "agent_b" });
    const onlyFailed = await subscribe({ events: ["turn.failed"] });
    const dev = await subscribe({ environment: "development" });
    await settleTurn(store, "turn.completed", { agentId: "agent_b" });
    await settleTurn(store, "turn.failed", { agentId: "agent_a", environment: "development" });
    await dispatcher.runOnce();
    expect((await list(onlyB.subscription.id)).map((d) => d.eventType)).toEqual(["turn.completed"]);
    expect(await list(onlyFailed.subscription.id)).toEqual([]);
    expect((await list(dev.subscription.id)).map((d) => d.eventType)).toEqual(["turn.failed"]);
  });

  it("fails pending deliveries when the subscription is deleted, and answers not_found after", async () => {
    const { subscription } = await subscribe();
    await subs.setStatus(subscription.id, "default", "paused");
    await settleTurn(store, "turn.completed");
    await dispatcher.runOnce();
    const [pending] = await list(subscription.id);
    await subs.remove(subscription.id, "default");
    expect(await deliveries().getDelivery(pending!.id)).toMatchObject({
      status: "failed",
      error: "subscription_deleted",
    });
    const gone = { code: "event_subscription_not_found" };
    await expect(subs.get(subscription.id, "default")).rejects.toMatchObject(gone);
    await expect(subs.deliveries(subscription.id, "default", {})).rejects.toMatchObject(gone);
    await expect(subs.get(pending!.subscriptionId, "other")).rejects.toMatchObject(gone);
  });

  it("cuts a long result to 16 KB and marks it truncated", async () => {
    const { subscription } = await subscribe();
    await settleTurn(store, "turn.completed", { text: "é".repeat(10_000) });
    await dispatcher.runOnce();
    const body = parseEventDelivery(receiver.received[0]!.body)!;
    expect(body.data.result!.truncated).toBe(true);
    expect(new TextEncoder().encode(body.data.result!.text).length).toBe(16 * 1024);
    expect((await list(subscription.id))[0]!.status).toBe("delivered");
  });
});
