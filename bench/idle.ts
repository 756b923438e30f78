// What idle sessions cost: `sessions` sessions with nothing to do (idle, their one turn
// completed, no lease) on one PostgreSQL database, and `processes` runtime processes on it. Each
// process's round trips are counted over a window with no sessions in the database, then over
// the same window with all of them: equal counts mean no periodic query per session. Also times
// the two reads of a recovery pass (the only periodic queries) at that size, round trip included.
import type { ChildProcess } from "node:child_process";
import { createPostgresStore } from "@opencomputer/store-postgres";
import pg from "pg";
import { startChild } from "./cluster.ts";

export interface IdleResult {
  sessions: number;
  processes: number;
  windowMs: number;
  /** Round trips per process per second: without sessions, and with `sessions` idle ones. */
  emptyPerSecond: number;
  loadedPerSecond: number;
  /** Database time of the recovery pass's two statements with every session present, ms. */
  recoverableMs: number;
  holdersMs: number;
}

const count = (child: ChildProcess) =>
  new Promise<number>((resolve) => {
    child.once("message", (m) => resolve((m as { roundTrips: number }).roundTrips));
    child.send("count");
  });

async function perSecond(children: ChildProcess[], windowMs: number): Promise<number> {
  const before = await Promise.all(children.map(count));
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const after = await Promise.all(children.map(count));
  // The "count" exchanges send nothing to the database.
  const total = after.reduce((n, a, i) => n + a - before[i]!, 0);
  return total / children.length / (windowMs / 1000);
}

/** Writes `sessions` idle sessions, each with one completed turn, in one statement per table. */
async function insertIdle(db: pg.Client, sessions: number): Promise<void> {
  const at = new Date().toISOString();
  await db.query(
    `INSERT INTO sessions (id, agent_id, deployment_id, environment, status, source, labels,
       label_index, execution_mode, result, question, runtime, revision, last_seq, created_at,
       updated_at, lease_runtime_id, lease_epoch, lease_expires_at)
     SELECT 'ses_idle_' || i, 'support', 'dep', 'production', 'idle', 'api', '{}', '{}',
       'sandbox', 'null', 'null', 'null', 3, 6, $2, $2, 'rt_gone', 1, 0
     FROM generate_series(1, $1) AS i`,
    [sessions, at],
  );
  await db.query(
    `INSERT INTO turns (session_id, id, input, mode, status, outcome, error, steps, created_at,
       updated_at, started_at, settled_at)
     SELECT 'ses_idle_' || i, 'turn_idle_' || i, '{"text":"hi"}', 'queue', 'completed',
       'completed', 'null', 2, $2, $2, $2, $2
     FROM generate_series(1, $1) AS i`,
    [sessions, at],
  );
  await db.query("ANALYZE sessions; ANALYZE turns");
}

/** Median wall time of `read` (round trip included) over 21 runs after one warm-up, ms. */
async function timed(read: () => Promise<unknown>): Promise<number> {
  await read();
  const times: number[] = [];
  for (let i = 0; i < 21; i++) {
    const t0 = performance.now();
    await read();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[10]!;
}

export async function benchIdle(
  url: string,
  sessions = 10_000,
  processes = 4,
  windowMs = 6_000,
): Promise<IdleResult> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < processes; i++) children.push(await startChild(url, true));
    const emptyPerSecond = await perSecond(children, windowMs);
    await insertIdle(db, sessions);
    const loadedPerSecond = await perSecond(children, windowMs);
    const store = await createPostgresStore({ connectionString: url, notify: false });
    let recoverableMs: number;
    let holdersMs: number;
    try {
      recoverableMs = await timed(() => store.listRecoverableSessions());
      holdersMs = await timed(() => store.listLeaseHolders());
    } finally {
      await store.close();
    }
    return {
      sessions,
      processes,
      windowMs,
      emptyPerSecond,
      loadedPerSecond,
      recoverableMs,
      holdersMs,
    };
  } finally {
    await db.end();
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once("exit", () => resolve());
            child.send("close");
          }),
      ),
    );
  }
}

export function idleTable(r: IdleResult): string {
  return [
    `idle: ${r.sessions.toLocaleString("en")} idle sessions, ${r.processes} processes, ${r.windowMs / 1000} s windows`,
    `  round trips per process per second: ${r.emptyPerSecond.toFixed(2)} with no sessions, ${r.loadedPerSecond.toFixed(2)} with them`,
    `  a recovery pass (the only periodic queries): recoverable sessions ${r.recoverableMs.toFixed(2)} ms, live lease holders ${r.holdersMs.toFixed(2)} ms (p50, round trip included)`,
  ].join("\n");
}
