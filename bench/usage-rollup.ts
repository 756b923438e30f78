// The usage roll-up (docs/usage.md) on SQLite and PostgreSQL: what the `usage_steps` rows add to
// writing steps (the same writes with the events under a type nothing rolls up, so no row is
// written: SQLite's trigger skips them, PostgreSQL's `oc_write` too), and how long `GET /usage`'s
// query takes over 100,000 steps in 2,000 sessions, in total, grouped and for one label value.
//
//   node --import tsx bench/usage-rollup.ts [--sessions 2000] [--steps 50]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { NewEvent, Store, UsageQuery, UsageStore } from "@opencomputer/runtime";
import { createPostgresStore, createPostgresUsageStore } from "@opencomputer/store-postgres";
import { createSqliteStore, createSqliteUsageStore } from "@opencomputer/store-sqlite";
import { startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";

const { values } = parseArgs({
  options: { sessions: { type: "string" }, steps: { type: "string" } },
});
const SESSIONS = Number(values.sessions ?? 2000);
const STEPS = Number(values.steps ?? 50);
// Writes with and without usage rows alternate, twice, so a busy moment of a shared machine
// does not land on one side only.
const ROUNDS = [true, false, true, false];

function step(k: number, rolledUp: boolean): NewEvent {
  return {
    // Not a protocol type: the stores take any type, and none rolls this one up.
    type: (rolledUp ? "usage.recorded" : "usage.bench_not_rolled_up") as "usage.recorded",
    data: {
      provider: "anthropic",
      model: "claude-sonnet-4.6",
      inputTokens: 100 + k,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0.001,
      pricing: "table",
    },
  };
}

/** Writes STEPS steps into each of SESSIONS sessions, one write per step; returns ms. */
async function fill(store: Store, rolledUp: boolean): Promise<number> {
  const now = new Date().toISOString();
  const started = performance.now();
  for (let i = 0; i < SESSIONS; i++) {
    const id = `ses_bench${i}`;
    await store.createSession(
      {
        id,
        projectId: "default",
        agentId: `agent${i % 5}`,
        deploymentId: "dep",
        environment: "production",
        status: "idle",
        source: "api",
        labels: { customer: `c${i % 50}` },
        executionMode: "default",
        result: null,
        question: null,
        runtime: {},
        revision: 1,
        lastSeq: 0,
        idempotencyKey: null,
        lease: null,
        createdAt: now,
        updatedAt: now,
      },
      [{ type: "session.created", data: { agentId: "a", deploymentId: "dep" } }],
    );
    for (let k = 0; k < STEPS; k++) await store.apply(id, { ops: [], events: [step(k, rolledUp)] });
  }
  return performance.now() - started;
}

async function queries(usage: UsageStore): Promise<Record<string, number>> {
  const window = { projectId: "default", from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z" };
  const cases: Record<string, UsageQuery> = {
    total: window,
    "by agent": { ...window, groupBy: { by: "agent" } },
    "by label": { ...window, groupBy: { by: "label", key: "customer" } },
    "one label value": { ...window, label: { key: "customer", value: "c7" } },
  };
  const out: Record<string, number> = {};
  for (const [name, query] of Object.entries(cases)) {
    await usage.rollUp(query);
    const started = performance.now();
    for (let i = 0; i < 5; i++) await usage.rollUp(query);
    out[name] = (performance.now() - started) / 5;
  }
  return out;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;
const rows: string[][] = [];

for (const rolledUp of ROUNDS) {
  const dir = mkdtempSync(join(tmpdir(), "oc-usage-bench-"));
  const store = createSqliteStore({ path: join(dir, "data.db") });
  const filled = await fill(store, rolledUp);
  rows.push([
    "sqlite",
    rolledUp ? "usage rows" : "no usage rows",
    `write ${ms((filled / (SESSIONS * STEPS)) * 1000)} per 1000 steps`,
  ]);
  if (rolledUp && rows.every((r) => r[1] !== "total" || r[0] !== "sqlite")) {
    for (const [name, t] of Object.entries(await queries(createSqliteUsageStore(store))))
      rows.push(["sqlite", name, ms(t)]);
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

const cluster = await startPrivateCluster();
try {
  for (const rolledUp of ROUNDS) {
    const store = await createPostgresStore({
      connectionString: cluster.connectionString(await cluster.createDatabase()),
    });
    const filled = await fill(store, rolledUp);
    rows.push([
      "postgres",
      rolledUp ? "usage rows" : "no usage rows",
      `write ${ms((filled / (SESSIONS * STEPS)) * 1000)} per 1000 steps`,
    ]);
    if (rolledUp && rows.every((r) => r[1] !== "total" || r[0] !== "postgres")) {
      // As autovacuum would after a bulk load; without statistics the planner can pick a poor plan.
      await store.pool.query("ANALYZE");
      for (const [name, t] of Object.entries(await queries(createPostgresUsageStore(store))))
        rows.push(["postgres", name, ms(t)]);
    }
    await store.close();
  }
} finally {
  await cluster.stop();
}

console.log(`usage roll-up: ${SESSIONS} sessions × ${STEPS} steps`);
for (const row of rows) console.log(row.map((c, i) => (i < 2 ? c.padEnd(16) : c)).join(""));
