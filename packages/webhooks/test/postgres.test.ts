// A delivery replayed 100 times at once through two "processes" (two runtimes, each on its own
// pool of one PostgreSQL database): one request, one session, one turn.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents, type Runtime } from "@opencomputer/runtime";
import {
  createPostgresStore,
  createPostgresTriggerStore,
  type PostgresStore,
} from "@opencomputer/store-postgres";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhooks } from "../src/index.ts";

let cluster: PrivateCluster;
let dir: string;
const stores: PostgresStore[] = [];
const runtimes: Runtime[] = [];
const hooks: Webhooks[] = [];

beforeAll(async () => {
  cluster = await startPrivateCluster();
  const database = await cluster.createDatabase();
  dir = mkdtempSync(join(tmpdir(), "oc-webhooks-pg-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "t.json"),
    JSON.stringify({ steps: [{ text: "ok" }] }),
  );
  for (const name of ["a", "b"]) {
    const store = await createPostgresStore({
      connectionString: cluster.connectionString(database),
    });
    const runtime = createRuntime({
      store,
      agents: createStaticAgents({ projectDir: dir, agents: { triage: () => "Triage." } }),
      models: createModelResolver({
        providers: { script: createScriptModel },
        override: "script/t",
      }),
      log: { error: () => {}, warn: () => {} },
    });
    await runtime.start();
    stores.push(store);
    runtimes.push(runtime);
    hooks.push(
      new Webhooks({
        store: createPostgresTriggerStore(store),
        sessions: runtime.sessions,
        holder: `rt_${name}`,
      }),
    );
  }
}, 60_000);

afterAll(async () => {
  for (const runtime of runtimes) await runtime.close();
  for (const store of stores) await store.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("webhooks on PostgreSQL", () => {
  it("starts one session for a delivery replayed 100 times at once through two processes", async () => {
    const { webhook, token } = await hooks[0]!.create({
      projectId: "default",
      agentId: "triage",
      environment: "production",
      name: "stripe",
    });
    const body = new TextEncoder().encode(JSON.stringify({ type: "invoice.paid" }));
    const headers = new Headers({ "idempotency-key": "evt_1" });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        hooks[i % 2]!.receive(webhook.id, token, headers, body),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    const sessionIds = new Set(results.map((r) => r.request.sessionId));
    expect(sessionIds.size).toBe(1);
    const [sessionId] = [...sessionIds];
    expect(sessionId).toMatch(/^ses_/);
    const { rows } = await stores[0]!.pool.query<{ sessions: string; turns: string }>(
      `SELECT (SELECT count(*) FROM sessions) AS sessions,
              (SELECT count(*) FROM turns WHERE session_id = $1) AS turns`,
      [sessionId],
    );
    expect(rows[0]).toEqual({ sessions: "1", turns: "1" });
  }, 60_000);
});
