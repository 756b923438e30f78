// Two runtimes in one test process, each with its own pool and LISTEN signal on one database,
// as two servers would be. No recovery poll runs (recoveryIntervalMs is huge), so only the
// signal can move work between them: a turn queued through B while A holds the session's lease
// is run by A (B backs off without claiming), and B's `watch` hears A's commits. No wait poll
// runs either (waitPollMs is huge): B's waitForTurn wakes on A's settling commit.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useModel } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents, type Runtime } from "@opencomputer/runtime";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  createPostgresSignal,
  createPostgresStore,
  type PostgresSignal,
  type PostgresStore,
} from "../../src/index.ts";

let cluster: PrivateCluster;
let dir: string;
const opened: Array<{ store: PostgresStore; signal: PostgresSignal; runtime: Runtime }> = [];

function chat() {
  useModel("script/test");
  return "Answer briefly.";
}

async function openRuntime(url: string, runtimeId: string) {
  const store = await createPostgresStore({ connectionString: url });
  const signal = await createPostgresSignal({ connectionString: url });
  const runtime = createRuntime({
    store,
    signal,
    runtimeId,
    agents: createStaticAgents({ projectDir: dir, agents: { chat } }),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: "script/test",
    }),
    execution: "in-process",
    recoveryIntervalMs: 3_600_000,
    waitPollMs: 3_600_000,
    idleReleaseMs: 60_000,
    leaseMs: 30_000,
  });
  await runtime.start();
  opened.push({ store, signal, runtime });
  return runtime;
}

beforeAll(async () => {
  cluster = await startPrivateCluster();
  dir = mkdtempSync(join(tmpdir(), "oc-dispatch-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "test.json"),
    JSON.stringify({ steps: [{ text: "one" }, { text: "two" }] }),
  );
}, 60_000);

afterAll(async () => {
  for (const o of opened) {
    await o.runtime.close();
    await o.signal.close();
    await o.store.close();
  }
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("dispatch through LISTEN/NOTIFY", () => {
  it("a turn queued on B runs on A, which holds the lease; B backs off and hears every commit", async () => {
    const url = cluster.connectionString(await cluster.createDatabase());
    const a = await openRuntime(url, "rt_a");
    const b = await openRuntime(url, "rt_b");
    expect(b.sessions.watchesAllProcesses).toBe(true);

    const { session } = await a.sessions.create({ agentId: "chat" });
    const first = await a.sessions.sendTurn(session.id, { text: "hi" });
    expect((await a.sessions.waitForTurn(session.id, first.turnId)).status).toBe("completed");
    const held = (await opened[0]!.store.getSession(session.id))!.lease!;
    expect(held).toMatchObject({ runtimeId: "rt_a", epoch: 1 });
    // A ran the turn it waited for, so its wait followed nothing: the session was never marked
    // followed, and its commits sent no notification but the one with work.
    expect(await followedUntil(url, session.id)).toBe(0);

    const heard: Array<number | null> = [];
    const stop = b.sessions.watch(session.id, (seq) => heard.push(seq));
    const second = await b.sessions.sendTurn(session.id, { text: "again" });
    const settled = await b.sessions.waitForTurn(session.id, second.turnId);
    expect(settled.status).toBe("completed");

    // A ran it under the same lease: a claim by B would have raised the epoch and logged a
    // takeover; nothing was recovered (the recovery pass never ran).
    const after = (await opened[0]!.store.getSession(session.id))!;
    expect(after.lease).toMatchObject({ runtimeId: "rt_a", epoch: 1 });
    const events = await a.sessions.events(session.id, 0);
    expect(events.some((e) => e.type === "runtime.disconnected")).toBe(false);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // B's watch hears A's commits, up to the last one: B followed the session. The wait may
    // have read the terminal event on its own connection before the last commit's notification
    // reached B's listening one, so the watch gets a moment for it.
    await vi.waitFor(() => expect(heard).toContain(after.lastSeq), { timeout: 5_000 });
    stop();
    expect(await followedUntil(url, session.id)).toBeGreaterThan(0);
  });
});

async function followedUntil(url: string, sessionId: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT followed_until FROM sessions WHERE id = $1", [
      sessionId,
    ]);
    return Number(rows[0].followed_until);
  } finally {
    await client.end();
  }
}
