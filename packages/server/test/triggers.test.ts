// Schedules and webhooks over HTTP: the routes, the key-less ingress, and a delivery replayed
// 100 times at once over real connections starting one session.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSchedule } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents, type Runtime } from "@opencomputer/runtime";
import { Scheduler } from "@opencomputer/schedules";
import {
  createSqliteStore,
  createSqliteTriggerStore,
  type SqliteStore,
} from "@opencomputer/store-sqlite";
import { Webhooks } from "@opencomputer/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHandler, createStaticKeyAuth, type Served, serve } from "../src/index.ts";
import type { Loose } from "./helpers.ts";

let dir: string;
let store: SqliteStore;
let runtime: Runtime;
let served: Served;
const KEY = "k-triggers";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "oc-triggers-http-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "test.json"),
    JSON.stringify({ steps: [{ text: "ok" }] }),
  );
  store = createSqliteStore({ path: join(dir, "data.db") });
  runtime = createRuntime({
    store,
    agents: createStaticAgents({ projectDir: dir, agents: { triage: () => "Triage." } }),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: "script/test",
    }),
    log: { error: () => {}, warn: () => {} },
  });
  await runtime.start();
  const triggers = createSqliteTriggerStore(store);
  const catalog = {
    list: async () => [
      {
        agentId: "triage",
        deploymentId: "static",
        schedule: defineSchedule({ id: "hourly", cron: "0 * * * *" }),
      },
    ],
  };
  const scheduler = new Scheduler(triggers, runtime.sessions, catalog, { holder: "rt_http" });
  const handler = createHandler({
    runtime,
    auth: createStaticKeyAuth([KEY]),
    schedules: { scheduler, store: triggers, catalog, projectId: "default" },
    webhooks: new Webhooks({ store: triggers, sessions: runtime.sessions, holder: "rt_http" }),
  });
  served = await serve(handler, { port: 0 });
});

afterAll(async () => {
  await served?.close();
  await runtime?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(served.url + path, {
    method,
    headers: { "x-api-key": KEY, "content-type": "application/json", ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Loose };
}

describe("schedule routes", () => {
  it("lists schedules, runs one now, and shows its history", async () => {
    const listed = await call("GET", "/schedules");
    expect(listed.body.schedules).toEqual([
      expect.objectContaining({
        agentId: "triage",
        id: "hourly",
        cron: "0 * * * *",
        enabled: ["production"],
      }),
    ]);
    const ran = await call("POST", "/schedules/triage/hourly/run", { environment: "development" });
    expect(ran.status).toBe(202);
    expect(ran.body.run).toMatchObject({
      manual: true,
      environment: "development",
      scheduleId: "hourly",
    });
    const history = await call("GET", "/schedules/triage/hourly/runs?environment=development");
    expect(history.body.runs.map((r: Loose) => r.id)).toEqual([ran.body.run.id]);
    expect((await call("GET", `/schedule-runs/${ran.body.run.id}`)).body.run.id).toBe(
      ran.body.run.id,
    );
    expect((await call("GET", "/schedule-runs/run_nope")).status).toBe(404);
    expect((await call("POST", "/schedules/triage/nope/run", {})).status).toBe(404);
    expect((await call("GET", "/schedules/triage/hourly/runs?status=bogus")).body.error.code).toBe(
      "invalid_query",
    );
  });
});

describe("webhook routes", () => {
  it("creates a webhook whose URL starts sessions without an API key, one per delivery id", async () => {
    const created = await call("POST", "/webhooks", {
      agentId: "triage",
      environment: "production",
      name: "github",
    });
    expect(created.status).toBe(201);
    const { webhook, url, token } = created.body;
    expect((await call("GET", "/webhooks")).body.webhooks).toEqual([webhook]);
    const post = (headers: Record<string, string>, path = url) =>
      fetch(served.url + path, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ action: "opened" }),
      });
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => post({ "x-github-delivery": "d-100" })),
    );
    const bodies = (await Promise.all(answers.map((a) => a.json()))) as Loose[];
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(202));
    expect(new Set(bodies.map((b) => b.sessionId)).size).toBe(1);
    expect(bodies.filter((b) => !b.duplicate)).toHaveLength(1);
    const sessions = (await call("GET", "/sessions")).body.sessions;
    const fromWebhooks = sessions.filter((s: Loose) => s.source === "webhook");
    expect(fromWebhooks.map((s: Loose) => s.id)).toEqual([bodies[0].sessionId]);
    // The Bearer form verifies the same credential; a wrong token answers like an unknown hook.
    expect(
      (await post({ authorization: `Bearer ${token}` }, `/agent-webhooks/${webhook.id}`)).status,
    ).toBe(202);
    expect((await post({}, `/agent-webhooks/${webhook.id}/ocwh_wrong`)).status).toBe(404);
    const big = await fetch(served.url + url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ payload: "x".repeat(300 * 1024) }),
    });
    expect(big.status).toBe(413);
    expect((await call("GET", `/webhooks/${webhook.id}/requests`)).body.requests).toHaveLength(2);
    const rotated = await call("POST", `/webhooks/${webhook.id}/rotate-token`);
    expect(rotated.body.token).not.toBe(token);
    expect((await post({ "idempotency-key": "new" })).status).toBe(404);
    expect((await call("POST", `/webhooks/${webhook.id}/disable`)).body.webhook.enabled).toBe(
      false,
    );
    expect((await post({}, rotated.body.url)).status).toBe(403);
    expect((await call("DELETE", `/webhooks/${webhook.id}`)).status).toBe(200);
    expect((await call("GET", `/webhooks/${webhook.id}`)).status).toBe(404);
  });
});
