// Two scheduler processes on one PostgreSQL database, killed (SIGKILL) and restarted in turns
// while a schedule fires every simulated minute (a real 200 ms): every occurrence gets one run
// row, every started run exactly one session, and no session is made twice for an occurrence,
// including starts cut by a kill and taken over by the other process.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import {
  createPostgresStore,
  createPostgresTriggerStore,
  type PostgresStore,
} from "@opencomputer/store-postgres";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cluster: PrivateCluster;
let database: string;
let store: PostgresStore;

beforeAll(async () => {
  cluster = await startPrivateCluster();
  database = await cluster.createDatabase();
  store = await createPostgresStore({ connectionString: cluster.connectionString(database) });
}, 60_000);

afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

const SCRIPT = resolve(import.meta.dirname, "fixtures/scheduler-process.ts");
const SPEED = 300; // one simulated minute = 200 ms real

function startProcess(name: string, clock: { real0: number; sim0: number }): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
    env: {
      ...process.env,
      SCHED_DB: cluster.connectionString(database),
      SCHED_REAL0: String(clock.real0),
      SCHED_SIM0: String(clock.sim0),
      SCHED_SPEED: String(SPEED),
      SCHED_NAME: name,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr!.on("data", (chunk) => {
    errors += String(chunk);
  });
  return new Promise((done, fail) => {
    child.stdout!.on("data", (chunk) => {
      if (String(chunk).includes("ready")) done(child);
    });
    child.once("exit", (code) => fail(new Error(`${name} exited ${code}: ${errors}`)));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function kill(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once("exit", () => done());
    child.kill("SIGKILL");
  });
}

describe("schedules across processes on PostgreSQL", () => {
  it("starts one session per occurrence while processes are killed and restarted", async () => {
    const clock = { real0: Date.now(), sim0: Date.parse("2026-03-02T17:00:30.000Z") };
    let a = await startProcess("a", clock);
    let b = await startProcess("b", clock);
    // Kill one process at a time, at varying moments, and bring it back (a start takes seconds
    // here, dozens of occurrences): the other one runs meanwhile.
    for (let round = 0; round < 3; round++) {
      await sleep(130 + round * 70);
      await kill(a);
      a = await startProcess("a", clock);
      await sleep(90 + round * 50);
      await kill(b);
      b = await startProcess("b", clock);
    }
    await sleep(1_500);
    await kill(a);
    await kill(b);

    const triggers = createPostgresTriggerStore(store);
    const runs = await triggers.listScheduleRuns({ projectId: "default", limit: 10_000 });
    const byTime = new Map<string, number>();
    for (const r of runs) byTime.set(r.intendedAt, (byTime.get(r.intendedAt) ?? 0) + 1);
    expect([...byTime.values()].every((n) => n === 1)).toBe(true);
    const started = runs.filter((r) => r.sessionId !== null);
    expect(started.length).toBeGreaterThanOrEqual(15);

    const { rows } = await store.pool.query<{ id: string; input: string }>(
      "SELECT s.id, t.input FROM sessions s JOIN turns t ON t.session_id = s.id WHERE s.source = 'schedule'",
    );
    const sessionsByRun = new Map<string, string[]>();
    for (const row of rows) {
      const input = typeof row.input === "string" ? JSON.parse(row.input) : row.input;
      const runId = input.schedule.runId as string;
      sessionsByRun.set(runId, [...(sessionsByRun.get(runId) ?? []), row.id]);
    }
    // One session (with one turn) per run, and every session belongs to a recorded run.
    for (const [runId, sessions] of sessionsByRun) {
      expect(sessions, runId).toHaveLength(1);
      expect(runs.some((r) => r.id === runId)).toBe(true);
    }
    for (const run of started) expect(sessionsByRun.get(run.id)).toEqual([run.sessionId]);
    const occurrences = [...byTime.keys()].sort();
    // The schedule's minutes, none skipped between the first and the last recorded.
    const minutes = (Date.parse(occurrences.at(-1)!) - Date.parse(occurrences[0]!)) / 60_000 + 1;
    expect(occurrences).toHaveLength(minutes);
    process.stdout.write(
      `occurrences ${occurrences.length}, sessions ${sessionsByRun.size}, ` +
        `missed ${runs.filter((r) => r.status === "missed").length}, ` +
        `taken over ${runs.filter((r) => r.attempt > 1).length}\n`,
    );
  }, 240_000);
});
