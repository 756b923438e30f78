// The TriggerStore contract as tests, run by each store from its own test file on a fresh
// database per test. The races the port exists to decide (one occurrence claimed once, one
// webhook delivery recorded once) are run concurrently, so a store that decides them by timing
// rather than by a unique index fails here.
import type { NewScheduleRun, ScheduleKey, TriggerStore, WebhookRow } from "@opencomputer/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

export interface TriggerStoreFixture {
  triggers: TriggerStore;
  close(): Promise<void>;
}

const KEY: ScheduleKey = {
  projectId: "default",
  environment: "production",
  agentId: "hygiene",
  scheduleId: "weekday",
};

let counter = 0;
const runId = () => `run_${process.pid}_${++counter}`;

function newRun(over: Partial<NewScheduleRun> = {}): NewScheduleRun {
  return {
    ...KEY,
    id: runId(),
    intendedAt: "2026-03-02T17:00:00.000Z",
    timezone: "America/Los_Angeles",
    manual: false,
    status: "claimed",
    deploymentId: "dep_1",
    claimedBy: "rt_a",
    claimExpiresAt: 10_000,
    error: null,
    createdAt: "2026-03-02T17:00:00.010Z",
    ...over,
  };
}

function webhook(over: Partial<WebhookRow> = {}): WebhookRow {
  return {
    id: `wh_${process.pid}_${++counter}`,
    projectId: "default",
    environment: "production",
    agentId: "hygiene",
    name: "sentry",
    enabled: true,
    tokenHash: "sha256:aa",
    createdAt: "2026-03-02T17:00:00.000Z",
    updatedAt: "2026-03-02T17:00:00.000Z",
    tokenRotatedAt: null,
    ...over,
  };
}

export function triggerStoreConformance(
  name: string,
  open: () => Promise<TriggerStoreFixture>,
): void {
  describe(`TriggerStore conformance: ${name}`, () => {
    let fixture: TriggerStoreFixture;
    let t: TriggerStore;
    beforeEach(async () => {
      fixture = await open();
      t = fixture.triggers;
    });
    afterEach(async () => {
      await fixture.close();
    });

    it("claims an occurrence once, however many claim it at the same time", async () => {
      const attempts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => t.insertScheduleRun(newRun({ claimedBy: `rt_${i}` }))),
      );
      const winners = attempts.filter((a) => a.created);
      expect(winners).toHaveLength(1);
      for (const a of attempts) expect(a.run.id).toBe(winners[0]!.run.id);
      const runs = await t.listScheduleRuns({ projectId: "default", limit: 100 });
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ status: "claimed", attempt: 1, manual: false });
    });

    it("never de-duplicates manual runs, and keys occurrences per environment", async () => {
      const a = await t.insertScheduleRun(newRun({ manual: true }));
      const b = await t.insertScheduleRun(newRun({ manual: true }));
      const dev = await t.insertScheduleRun(newRun({ environment: "development" }));
      expect([a.created, b.created, dev.created]).toEqual([true, true, true]);
    });

    it("lets one process take over a lapsed claim, and only a lapsed one", async () => {
      const { run } = await t.insertScheduleRun(newRun({ claimExpiresAt: 1_000 }));
      expect(await t.reclaimScheduleRun(run.id, "rt_b", 999, 5_000)).toBeNull();
      expect((await t.lapsedScheduleClaims(999, 10)).map((r) => r.id)).toEqual([]);
      expect((await t.lapsedScheduleClaims(1_001, 10)).map((r) => r.id)).toEqual([run.id]);
      const takers = await Promise.all(
        ["rt_b", "rt_c", "rt_d"].map((h) => t.reclaimScheduleRun(run.id, h, 1_001, 5_000)),
      );
      const taken = takers.filter((r) => r !== null);
      expect(taken).toHaveLength(1);
      expect(taken[0]).toMatchObject({ attempt: 2, claimExpiresAt: 5_000 });
    });

    it("changes a run's status only from the status it expects", async () => {
      const { run } = await t.insertScheduleRun(newRun());
      const at = "2026-03-02T17:00:01.000Z";
      const started = { status: "started" as const, sessionId: "ses_1", turnId: "turn_1" };
      expect(await t.updateScheduleRun(run.id, ["claimed"], { ...started, updatedAt: at })).toBe(
        true,
      );
      expect(await t.updateScheduleRun(run.id, ["claimed"], { ...started, updatedAt: at })).toBe(
        false,
      );
      expect(await t.getScheduleRun(run.id)).toMatchObject({
        status: "started",
        sessionId: "ses_1",
        turnId: "turn_1",
        claimedBy: null,
        updatedAt: at,
      });
      expect((await t.startedScheduleRuns(10)).map((r) => r.id)).toEqual([run.id]);
      expect((await t.openScheduleRuns(KEY)).map((r) => r.id)).toEqual([run.id]);
      await t.updateScheduleRun(run.id, ["started"], { status: "completed", updatedAt: at });
      expect(await t.openScheduleRuns(KEY)).toEqual([]);
    });

    it("lists runs newest first with filters and a cursor", async () => {
      const times = ["01", "02", "03", "04"].map((m) => `2026-03-02T17:${m}:00.000Z`);
      for (const intendedAt of times) await t.insertScheduleRun(newRun({ intendedAt }));
      await t.insertScheduleRun(newRun({ scheduleId: "other", status: "missed" }));
      const page1 = await t.listScheduleRuns({
        projectId: "default",
        scheduleId: KEY.scheduleId,
        limit: 3,
      });
      expect(page1.map((r) => r.intendedAt)).toEqual([times[3], times[2], times[1]]);
      const last = page1[2]!;
      const page2 = await t.listScheduleRuns({
        projectId: "default",
        scheduleId: KEY.scheduleId,
        limit: 3,
        before: { intendedAt: last.intendedAt, id: last.id },
      });
      expect(page2.map((r) => r.intendedAt)).toEqual([times[0]]);
      expect(
        await t.listScheduleRuns({ projectId: "default", status: "missed", limit: 9 }),
      ).toHaveLength(1);
      expect(await t.listScheduleRuns({ projectId: "other", limit: 9 })).toEqual([]);
    });

    it("moves a schedule's cursor forward only", async () => {
      expect(await t.scheduleCursor(KEY)).toBeNull();
      expect(await t.advanceScheduleCursor(KEY, "2026-03-02T17:00:00.000Z")).toBe(true);
      expect(await t.advanceScheduleCursor(KEY, "2026-03-02T16:00:00.000Z")).toBe(false);
      expect(await t.scheduleCursor(KEY)).toBe("2026-03-02T17:00:00.000Z");
      expect(await t.advanceScheduleCursor(KEY, "2026-03-02T18:00:00.000Z")).toBe(true);
      expect(await t.scheduleCursor(KEY)).toBe("2026-03-02T18:00:00.000Z");
      expect(await t.scheduleCursor({ ...KEY, environment: "development" })).toBeNull();
    });

    it("keeps webhooks: create, list, update, delete", async () => {
      const w = webhook();
      await t.createWebhook(w);
      await t.createWebhook(webhook({ agentId: "other" }));
      expect(await t.getWebhook(w.id)).toEqual(w);
      expect(await t.listWebhooks({ projectId: "default", agentId: "hygiene" })).toEqual([w]);
      expect(await t.listWebhooks({ projectId: "nope" })).toEqual([]);
      const at = "2026-03-02T18:00:00.000Z";
      expect(
        await t.updateWebhook(w.id, {
          enabled: false,
          tokenHash: "sha256:bb",
          tokenRotatedAt: at,
          updatedAt: at,
        }),
      ).toBe(true);
      expect(await t.getWebhook(w.id)).toMatchObject({
        enabled: false,
        tokenHash: "sha256:bb",
        tokenRotatedAt: at,
      });
      expect(await t.updateWebhook("wh_missing", { enabled: true, updatedAt: at })).toBe(false);
      expect(await t.deleteWebhook(w.id)).toBe(true);
      expect(await t.getWebhook(w.id)).toBeNull();
      expect(await t.deleteWebhook(w.id)).toBe(false);
    });

    it("records one request per delivery id, however many arrive at once", async () => {
      const w = webhook();
      await t.createWebhook(w);
      const input = { source: "webhook", payload: { n: 1 } };
      const results = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          t.insertWebhookRequest({
            id: `req_${i}_${++counter}`,
            webhookId: w.id,
            deliveryKey: "delivery-1",
            input,
            receivedAt: "2026-03-02T17:00:00.000Z",
            claimedBy: `rt_${i}`,
            claimExpiresAt: 1_000,
          }),
        ),
      );
      const created = results.filter((r) => r.created);
      expect(created).toHaveLength(1);
      for (const r of results) expect(r.request.id).toBe(created[0]!.request.id);
      expect(created[0]!.request).toMatchObject({ outcome: "pending", input, attempts: 0 });
      // Without a delivery id every request is its own.
      const a = await t.insertWebhookRequest({
        id: `req_a_${++counter}`,
        webhookId: w.id,
        deliveryKey: null,
        input,
        receivedAt: "2026-03-02T17:00:01.000Z",
        claimedBy: "rt_a",
        claimExpiresAt: 1_000,
      });
      const b = await t.insertWebhookRequest({
        id: `req_b_${++counter}`,
        webhookId: w.id,
        deliveryKey: null,
        input,
        receivedAt: "2026-03-02T17:00:02.000Z",
        claimedBy: "rt_a",
        claimExpiresAt: 1_000,
      });
      expect([a.created, b.created]).toEqual([true, true]);
      expect((await t.listWebhookRequests(w.id, 10)).map((r) => r.id)).toEqual([
        b.request.id,
        a.request.id,
        created[0]!.request.id,
      ]);
    });

    it("claims a pending request for one starter and settles it once", async () => {
      const w = webhook();
      await t.createWebhook(w);
      const { request } = await t.insertWebhookRequest({
        id: `req_${++counter}`,
        webhookId: w.id,
        deliveryKey: "d",
        input: {},
        receivedAt: "2026-03-02T17:00:00.000Z",
        claimedBy: "rt_a",
        claimExpiresAt: 1_000,
      });
      expect(await t.claimWebhookRequest(request.id, "rt_b", 500, 9_000)).toBeNull();
      expect(await t.claimWebhookRequest(request.id, "rt_a", 500, 2_000)).toMatchObject({
        attempts: 1,
      });
      expect((await t.lapsedWebhookRequests(2_001, 10)).map((r) => r.id)).toEqual([request.id]);
      const racers = await Promise.all(
        ["rt_b", "rt_c"].map((h) => t.claimWebhookRequest(request.id, h, 2_001, 9_000)),
      );
      expect(racers.filter((r) => r !== null)).toHaveLength(1);
      const at = "2026-03-02T17:00:05.000Z";
      const accepted = {
        outcome: "accepted" as const,
        sessionId: "ses_1",
        turnId: "turn_1",
        updatedAt: at,
      };
      expect(await t.settleWebhookRequest(request.id, accepted)).toBe(true);
      expect(await t.settleWebhookRequest(request.id, accepted)).toBe(false);
      expect(await t.getWebhookRequest(request.id)).toMatchObject({
        outcome: "accepted",
        sessionId: "ses_1",
        claimedBy: null,
      });
      expect(await t.claimWebhookRequest(request.id, "rt_b", 99_999, 100_000)).toBeNull();
      // Only a failed request reopens, with its attempts counted again from zero.
      expect(await t.reopenWebhookRequest(request.id, at)).toBe(false);
      const failed = await t.insertWebhookRequest({
        id: `req_${++counter}`,
        webhookId: w.id,
        deliveryKey: "f",
        input: {},
        receivedAt: at,
        claimedBy: "rt_a",
        claimExpiresAt: 1_000,
      });
      await t.claimWebhookRequest(failed.request.id, "rt_a", 500, 2_000);
      await t.settleWebhookRequest(failed.request.id, {
        outcome: "failed",
        error: "x",
        updatedAt: at,
      });
      expect(await t.reopenWebhookRequest(failed.request.id, at)).toBe(true);
      expect(await t.getWebhookRequest(failed.request.id)).toMatchObject({
        outcome: "pending",
        attempts: 0,
        error: null,
        claimedBy: null,
      });
    });
  });
}
