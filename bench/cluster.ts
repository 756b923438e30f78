// Scale-out benchmark: 1, 2 and 4 runtime processes on one private PostgreSQL cluster (each with
// its LISTEN/NOTIFY signal), and one process on SQLite for reference. Every process runs its
// share of sessions (create, one turn of the support example, wait), `concurrency` at a time;
// all processes start together. Reports turns and events per second over the slowest
// process's wall time, and the commit latency (apply / applyWithLease / createSession) p50/p99.
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import type { ChildGo, ChildReport, ChildWarmUp } from "./cluster-child.ts";
import { BENCH_LEASE_MS } from "./cluster-config.ts";
import { clusterCpu } from "./db-cpu.ts";
import { benchIdle, type IdleResult, idleTable } from "./idle.ts";
import { percentile } from "./stats.ts";
import { benchTakeover, type TakeoverResult } from "./takeover.ts";

export interface ClusterRow {
  store: "postgres" | "sqlite";
  /** False for the reference rows without NOTIFY/LISTEN (one process only). */
  notify: boolean;
  /** fsync and synchronous_commit on: every commit waits for its WAL flush. */
  durable: boolean;
  processes: number;
  turns: number;
  failedTurns: number;
  events: number;
  wallMs: number;
  turnsPerSecond: number;
  eventsPerSecond: number;
  commits: number;
  commitP50Us: number;
  commitP99Us: number;
  /** PostgreSQL round trips per turn (each query node-postgres sends); null on SQLite. */
  roundTripsPerTurn: number | null;
  /** CPU per turn of the runtime processes, and of the PostgreSQL cluster (null on SQLite), ms. */
  runtimeCpuMsPerTurn: number;
  dbCpuMsPerTurn: number | null;
  /**
   * Commits that sent NOTIFY, per turn (what one process heard; null without a signal). They
   * are what PostgreSQL's cluster-wide notification lock serialises.
   */
  notifiesPerTurn: number | null;
  /** SIGKILL one of the processes mid-turn (PostgreSQL, 2+ processes); null otherwise. */
  takeover: TakeoverResult | null;
}

export interface ClusterResult {
  sessions: number;
  concurrencyPerProcess: number;
  rows: ClusterRow[];
  /** The takeover again with 2 processes whose ids cannot be judged dead (as on two hosts). */
  remoteTakeover: TakeoverResult | null;
  /** 10,000 idle sessions on 4 processes: what they send while nothing happens. */
  idle: IdleResult | null;
}

const CHILD = fileURLToPath(new URL("./cluster-child.ts", import.meta.url));

export function startChild(url: string, notify: boolean): Promise<ChildProcess> {
  const child = fork(CHILD, notify ? [url] : [url, "nonotify"], {
    execArgv: ["--import", "tsx", ...(process.env.OC_CHILD_ARGS?.split(" ") ?? [])],
    stdio: "inherit",
  });
  return new Promise((resolve, reject) => {
    child.once("message", (m) => (m === "ready" ? resolve(child) : reject(new Error(String(m)))));
    child.once("exit", (code) => reject(new Error(`cluster child exited ${code}`)));
  });
}

export async function runConfig(
  store: ClusterRow["store"],
  url: string,
  processes: number,
  sessions: number,
  concurrency: number,
  notify = true,
): Promise<ClusterRow> {
  // Started one by one: concurrent first migrations are safe, but this keeps startup quiet.
  const children: ChildProcess[] = [];
  for (let i = 0; i < processes; i++) children.push(await startChild(url, notify));
  try {
    const share = Math.ceil(sessions / processes);
    const dbCpu = store === "postgres" ? await clusterCpu(url) : () => 0;
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once("message", () => resolve());
            child.send({ warmUp: concurrency } satisfies ChildWarmUp);
          }),
      ),
    );
    // Every process warmed up: the measured window starts for all of them at once.
    const db0 = dbCpu();
    const reports = await Promise.all(
      children.map(
        (child) =>
          new Promise<ChildReport>((resolve) => {
            child.once("message", (m) => resolve(m as ChildReport));
            child.send({ sessions: share, concurrency } satisfies ChildGo);
          }),
      ),
    );
    // Until the slowest process finished: the faster ones' idle time is in it too.
    const dbMs = dbCpu() - db0;
    const wallMs = Math.max(...reports.map((r) => r.wallMs));
    const turns = reports.reduce((n, r) => n + r.turns, 0);
    const events = reports.reduce((n, r) => n + r.events, 0);
    const commits = Float64Array.from(reports.flatMap((r) => r.commitUs)).sort();
    return {
      store,
      notify: store === "postgres" && notify,
      durable: false,
      processes,
      turns,
      failedTurns: reports.reduce((n, r) => n + r.failedTurns, 0),
      events,
      wallMs,
      turnsPerSecond: turns / (wallMs / 1000),
      eventsPerSecond: events / (wallMs / 1000),
      commits: commits.length,
      commitP50Us: percentile(commits, 50),
      commitP99Us: percentile(commits, 99),
      roundTripsPerTurn:
        store === "postgres" ? reports.reduce((n, r) => n + r.roundTrips, 0) / turns : null,
      runtimeCpuMsPerTurn: reports.reduce((n, r) => n + r.cpuMs, 0) / turns,
      dbCpuMsPerTurn: store === "postgres" ? dbMs / turns : null,
      notifiesPerTurn:
        store === "postgres" && notify
          ? reports.reduce((n, r) => n + r.heard, 0) / processes / turns
          : null,
      takeover: null,
    };
  } finally {
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

export async function benchCluster(
  sessions = 400,
  concurrency = 16,
  processCounts: readonly number[] = [1, 2, 4],
  takeoverSessions = 50,
  idleSessions = 10_000,
  durable = true,
): Promise<ClusterResult> {
  const rows: ClusterRow[] = [];
  let idle: IdleResult | null = null;
  let remoteTakeover: TakeoverResult | null = null;
  const dir = mkdtempSync(join(tmpdir(), "oc-bench-cluster-"));
  try {
    rows.push(await runConfig("sqlite", join(dir, "data.db"), 1, sessions, concurrency));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cluster = await startPrivateCluster();
  try {
    const plain = cluster.connectionString(await cluster.createDatabase());
    rows.push(await runConfig("postgres", plain, 1, sessions, concurrency, false));
    for (const processes of processCounts) {
      // A fresh database per configuration, so one run's rows do not slow the next.
      const url = cluster.connectionString(await cluster.createDatabase());
      const row = await runConfig("postgres", url, processes, sessions, concurrency);
      if (processes >= 2 && takeoverSessions > 0)
        row.takeover = await benchTakeover(url, processes, takeoverSessions);
      rows.push(row);
    }
    if (takeoverSessions > 0) {
      const url = cluster.connectionString(await cluster.createDatabase());
      remoteTakeover = await benchTakeover(url, 2, takeoverSessions, true);
    }
    if (idleSessions > 0) {
      idle = await benchIdle(
        cluster.connectionString(await cluster.createDatabase()),
        idleSessions,
      );
    }
  } finally {
    await cluster.stop();
  }
  if (durable) {
    // The NOTIFY queue lock: a notifying transaction holds it from pre-commit until after its
    // commit, WAL flush included, so with durable commits notifying writes are serialised. The
    // same one-process run without and with NOTIFY on a cluster that flushes every commit.
    const flushing = await startPrivateCluster({ durable: true });
    try {
      for (const notify of [false, true]) {
        const url = flushing.connectionString(await flushing.createDatabase());
        const row = await runConfig("postgres", url, 1, sessions, concurrency, notify);
        rows.push({ ...row, durable: true });
      }
    } finally {
      await flushing.stop();
    }
  }
  return { sessions, concurrencyPerProcess: concurrency, rows, remoteTakeover, idle };
}

const ms = (value: number) => (Number.isFinite(value) ? `${(value / 1000).toFixed(2)} s` : "never");

export function clusterTable(result: ClusterResult): string {
  const head = `${result.sessions} sessions × 1 turn, ${result.concurrencyPerProcess} in flight per process`;
  const lines = [
    "store         procs  turns/s  events/s  commit p50  commit p99  failed  trips/turn  rt cpu/turn  db cpu/turn  notify/turn  takeover p50  takeover p90  finish p90",
    ...result.rows.map((r) => {
      const t = r.takeover;
      return [
        `${r.store === "postgres" && !r.notify ? "postgres*" : r.store}${r.durable ? " (d)" : ""}`.padEnd(
          13,
        ),
        String(r.processes).padStart(5),
        r.turnsPerSecond.toFixed(0).padStart(8),
        r.eventsPerSecond.toFixed(0).padStart(9),
        `${(r.commitP50Us / 1000).toFixed(2)} ms`.padStart(11),
        `${(r.commitP99Us / 1000).toFixed(2)} ms`.padStart(11),
        String(r.failedTurns).padStart(7),
        (r.roundTripsPerTurn === null ? "-" : r.roundTripsPerTurn.toFixed(1)).padStart(11),
        `${r.runtimeCpuMsPerTurn.toFixed(2)} ms`.padStart(12),
        (r.dbCpuMsPerTurn === null ? "-" : `${r.dbCpuMsPerTurn.toFixed(2)} ms`).padStart(12),
        (r.notifiesPerTurn === null ? "-" : r.notifiesPerTurn.toFixed(2)).padStart(12),
        (t ? ms(t.resumeP50Ms) : "-").padStart(13),
        (t ? ms(t.resumeP90Ms) : "-").padStart(13),
        (t ? ms(t.finishP90Ms) : "-").padStart(11),
      ].join(" ");
    }),
  ];
  const takeover = result.rows.find((r) => r.takeover)?.takeover;
  const notes = [
    "postgres* = one process without NOTIFY/LISTEN (the price of the signal); (d) = fsync and synchronous_commit on",
    "trips/turn = PostgreSQL round trips per session with one turn (create, turn, wait), all processes",
    "rt cpu/turn, db cpu/turn = CPU time per turn of the runtime processes and of the PostgreSQL cluster (all its processes)",
    "notify/turn = commits that sent NOTIFY per turn (each takes PostgreSQL's cluster-wide notification lock)",
  ];
  if (takeover) {
    const lost = result.rows.reduce((n, r) => n + (r.takeover?.lost ?? 0), 0);
    notes.push(
      `takeover = ${takeover.sessions} running turns of a SIGKILLed process (lease ${BENCH_LEASE_MS / 1000} s), ` +
        `time from the kill until a survivor resumed each (p50, p90) and until it finished (p90); ` +
        `an undisturbed turn takes ${ms(takeover.normalTurnMs)}; turns lost: ${lost}`,
    );
  }
  const remote = result.remoteTakeover;
  if (remote) {
    notes.push(
      `takeover from another host (2 processes, runtime ids /proc cannot judge, so the lease must expire): ` +
        `resumed p50 ${ms(remote.resumeP50Ms)}, p90 ${ms(remote.resumeP90Ms)}; finished p90 ${ms(remote.finishP90Ms)}; turns lost: ${remote.lost}`,
    );
  }
  const idle = result.idle ? `\n${idleTable(result.idle)}` : "";
  return `${head}\n${lines.join("\n")}\n${notes.join("\n")}${idle}`;
}
