import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useInput } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents, type Runtime } from "@opencomputer/runtime";
import {
  createSqliteStore,
  createSqliteTriggerStore,
  type SqliteStore,
} from "@opencomputer/store-sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tokenHash, Webhooks } from "../src/index.ts";

let dir: string;
let store: SqliteStore;
let runtime: Runtime;
let webhooks: Webhooks;
const seen: unknown[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "oc-webhooks-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "test.json"),
    JSON.stringify({ steps: [{ text: "ok" }] }),
  );
  store = createSqliteStore({ path: join(dir, "data.db") });
  runtime = createRuntime({
    store,
    agents: createStaticAgents({
      projectDir: dir,
      agents: {
        triage: () => {
          seen.push(useInput());
          return "Triage the alert.";
        },
      },
    }),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: "script/test",
    }),
    log: { error: () => {}, warn: () => {} },
  });
  await runtime.start();
  webhooks = new Webhooks({
    store: createSqliteTriggerStore(store),
    sessions: runtime.sessions,
    holder: "rt_test",
  });
});

afterEach(async () => {
  await runtime.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const tokenOf = (url: string) => url.split("/").pop()!;

describe("webhooks", () => {
  it("shows the token once and keeps only its digest", async () => {
    const created = await webhooks.create({
      projectId: "default",
      agentId: "triage",
      environment: "production",
      name: "sentry",
    });
    expect(created.url).toBe(`/agent-webhooks/${created.webhook.id}/${created.token}`);
    expect(created.token).toMatch(/^ocwh_[A-Za-z0-9_-]{43}$/);
    const listed = await webhooks.list({ projectId: "default" });
    expect(listed).toEqual([created.webhook]);
    expect(JSON.stringify(listed)).not.toContain(created.token);
    const row = await createSqliteTriggerStore(store).getWebhook(created.webhook.id);
    expect(row!.tokenHash).toBe(tokenHash(created.token));
  });

  it("starts a session with the body as input and the webhook's provenance", async () => {
    const { webhook, token } = await webhooks.create({
      projectId: "default",
      agentId: "triage",
      environment: "production",
      name: "sentry",
    });
    const sentry = { action: "triggered", data: { event: { event_id: "e1" } } };
    const result = await webhooks.receive(
      webhook.id,
      token,
      new Headers({ "request-id": "r1" }),
      body(sentry),
    );
    expect(result).toMatchObject({
      status: 202,
      duplicate: false,
      request: { outcome: "accepted", deliveryKey: "request-id:r1" },
    });
    const session = await runtime.sessions.get(result.request.sessionId!);
    expect(session).toMatchObject({
      source: "webhook",
      environment: "production",
      agentId: "triage",
    });
    expect(session.turns[0]!.input).toEqual({
      source: "webhook",
      text: "Webhook sentry invoked",
      payload: sentry,
      webhook: {
        webhookId: webhook.id,
        requestId: result.request.id,
        receivedAt: result.request.receivedAt,
      },
    });
    // `text` and `payload` keys are taken as they are.
    const direct = await webhooks.receive(
      webhook.id,
      token,
      new Headers(),
      body({ text: "Run it.", payload: { mode: "hygiene" } }),
    );
    const second = await runtime.sessions.get(direct.request.sessionId!);
    expect(second.turns[0]!.input).toMatchObject({ text: "Run it.", payload: { mode: "hygiene" } });
  });

  it("starts one session for 100 concurrent copies of one delivery, all answered alike", async () => {
    const { webhook, token } = await webhooks.create({
      projectId: "default",
      agentId: "triage",
      environment: "production",
      name: "github",
    });
    const headers = new Headers({ "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" });
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        webhooks.receive(webhook.id, token, headers, body({ zen: "Keep it simple." })),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.request.id)).size).toBe(1);
    const sessionIds = new Set(results.map((r) => r.request.sessionId));
    expect(sessionIds.size).toBe(1);
    expect([...sessionIds][0]).toMatch(/^ses_/);
    const page = await runtime.sessions.list({ projectId: "default", limit: 100 });
    expect(page.sessions).toHaveLength(1);
    const session = await runtime.sessions.get([...sessionIds][0]!);
    expect(session.turns).toHaveLength(1);
    expect(await webhooks.requests(webhook.id, "default")).toHaveLength(1);
    // A later replay still answers with the first delivery's session.
    const later = await webhooks.receive(
      webhook.id,
      token,
      headers,
      body({ zen: "Keep it simple." }),
    );
    expect(later).toMatchObject({ duplicate: true, request: { sessionId: [...sessionIds][0] } });
  });

  it("refuses a wrong token, a disabled webhook, a reused delivery id with another body, non-JSON", async () => {
    const { webhook, token } = await webhooks.create({
      projectId: "default",
      agentId: "triage",
      environment: "development",
      name: "ci",
    });
    const h = new Headers({ "idempotency-key": "k1" });
    await expect(webhooks.receive(webhook.id, "ocwh_wrong", h, body({}))).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(webhooks.receive("wh_unknown", token, h, body({}))).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(
      webhooks.receive(webhook.id, token, h, new TextEncoder().encode("not json")),
    ).rejects.toMatchObject({
      code: "invalid_json",
    });
    await webhooks.receive(webhook.id, token, h, body({ a: 1 }));
    await expect(webhooks.receive(webhook.id, token, h, body({ a: 2 }))).rejects.toMatchObject({
      code: "idempotency_conflict",
    });
    await webhooks.setEnabled(webhook.id, "default", false);
    await expect(
      webhooks.receive(webhook.id, token, new Headers(), body({})),
    ).rejects.toMatchObject({
      code: "webhook_disabled",
    });
    await webhooks.setEnabled(webhook.id, "default", true);
    const rotated = await webhooks.rotateToken(webhook.id, "default");
    await expect(
      webhooks.receive(webhook.id, token, new Headers(), body({})),
    ).rejects.toMatchObject({ code: "not_found" });
    expect(
      (await webhooks.receive(webhook.id, tokenOf(rotated.url), new Headers(), body({}))).status,
    ).toBe(202);
    await expect(webhooks.get(webhook.id, "other-project")).rejects.toMatchObject({
      code: "not_found",
    });
    await webhooks.remove(webhook.id, "default");
    await expect(webhooks.get(webhook.id, "default")).rejects.toMatchObject({ code: "not_found" });
  });

  it("retries a start that failed, from another process, after its claim lapses", async () => {
    let now = Date.parse("2026-03-02T17:00:00Z");
    const triggers = createSqliteTriggerStore(store);
    const broken = new Webhooks({
      store: triggers,
      sessions: {
        create: () => Promise.reject(new Error("store unavailable")),
        sendTurn: runtime.sessions.sendTurn,
      },
      holder: "rt_a",
      clock: () => now,
    });
    const { webhook, token } = await broken.create({
      projectId: "default",
      agentId: "triage",
      environment: "production",
      name: "s",
    });
    const first = await broken.receive(
      webhook.id,
      token,
      new Headers({ "svix-id": "msg_1" }),
      body({ n: 1 }),
    );
    expect(first.request).toMatchObject({ outcome: "pending", sessionId: null });
    const healthy = new Webhooks({
      store: triggers,
      sessions: runtime.sessions,
      holder: "rt_b",
      clock: () => now,
    });
    expect(await healthy.resume()).toBe(0);
    now += 31_000;
    expect(await healthy.resume()).toBe(1);
    const [request] = await healthy.requests(webhook.id, "default");
    expect(request).toMatchObject({ id: first.request.id, outcome: "accepted" });
    expect(request!.sessionId).toMatch(/^ses_/);
  });

  it("starts a failed delivery again when the sender retries it", async () => {
    const triggers = createSqliteTriggerStore(store);
    let fail = true;
    const flaky = new Webhooks({
      store: triggers,
      sessions: {
        create: (o) => (fail ? Promise.reject(new Error("down")) : runtime.sessions.create(o)),
        sendTurn: runtime.sessions.sendTurn,
      },
      holder: "rt_a",
      maxAttempts: 1,
    });
    const { webhook, token } = await flaky.create({
      projectId: "default",
      agentId: "triage",
      environment: "production",
      name: "f",
    });
    const headers = new Headers({ "idempotency-key": "again" });
    const first = await flaky.receive(webhook.id, token, headers, body({ n: 1 }));
    expect(first.request).toMatchObject({ outcome: "failed", error: "start_failed: down" });
    fail = false;
    const retry = await flaky.receive(webhook.id, token, headers, body({ n: 1 }));
    expect(retry).toMatchObject({
      duplicate: true,
      request: { id: first.request.id, outcome: "accepted" },
    });
    expect(retry.request.sessionId).toMatch(/^ses_/);
  });
});
