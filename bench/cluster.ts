// Scale-out benchmark: 1, 2 and 4 runtime processes on one private PostgreSQL cluster (each with
// its LISTEN/NOTIFY signal), and one process on SQLite for reference. Every process runs its
// share of sessions (create, one turn of the support example, wait), `concurrency` at a time;
// all processes start together. Reports turns and events per second over the slowest
// process's wall time, and the commit latency (apply / applyWithLease / createSession) p50/p99.
// The configurations run in alternated rounds; each row is its configuration's median round.
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import type { ChildGo, ChildReport, ChildWarm, ChildWarmUp } from "./cluster-child.ts";
import { BENCH_LEASE_MS } from "./cluster-config.ts";
import { busiestMs, clusterCpu } from "./db-cpu.ts";
import { benchIdle, type IdleResult, idleTable } from "./idle.ts";
import { percentile } from "./stats.ts";
import { benchTakeover, type TakeoverResult } from "./takeover.ts";

export interface ClusterRow {
  store: "postgres" | "sqlite";
  /** False for the reference rows without NOTIFY/LISTEN (one process only). */
  notify: boolean;
  /** fsync on: every commit waits for its WAL to reach the disk. */
  durable: boolean;
  processes: number;
  turns: number;
  failedTurns: number;
  events: number;
  wallMs: number;
  turnsPerSecond: number;
  /** Turns/s of the warm-up: fresh processes on a fresh database (over the slowest one's wall). */
  coldTurnsPerSecond: number;
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
   * CPU time over the measured window, in cores, of the busiest runtime process (its V8 helper
   * threads included) and the busiest PostgreSQL process (null on SQLite). A backend runs on one
   * thread: near 1 it could not answer faster.
   */
  busiestCore: { runtime: number; database: number | null };
  /**
   * Commits that sent NOTIFY, per turn (what one process heard; null without a signal). They
   * are what PostgreSQL's cluster-wide notification lock serialises.
   */
  notifiesPerTurn: number | null;
  /** SIGKILL one of the processes mid-turn (PostgreSQL, 2+ processes); null otherwise. */
  takeover: TakeoverResult | null;
  /** Turns/s of every round of this configuration, in order (the row is the median round). */
  roundsTurnsPerSecond?: number[];
  /** Each process's pipeline as its store chose it (pipeline-size.ts); empty on SQLite. */
  pipelines: NonNullable<ChildReport["pipeline"]>[];
}

export interface ClusterResult {
  sessions: number;
  /** Warm-up sessions per process before each measured window. */
  warmUp: number;
  concurrencyPerProcess: number;
  /** Times each throughput configuration ran (its row is the median round). */
  rounds: number;
  rows: ClusterRow[];
  /** The takeover again with 2 processes whose ids cannot be judged dead (as on two hosts). */
  remoteTakeover: TakeoverResult | null;
  /** 10,000 idle sessions on 4 processes: what they send while nothing happens. */
  idle: IdleResult | null;
}

const CHILD = fileURLToPath(new URL("./cluster-child.ts", import.meta.url));

export function startChild(url: string, notify: boolean): Promise<ChildProcess> {
  const child = fork(CHILD, notify ? [url] : [url, "nonotify"], {
    execArgv: [
      "--import",
      "tsx",
      ...(process.env.OC_CHILD_ARGS?.split(/\s+/).filter(Boolean) ?? []),
    ],
    stdio: "inherit",
  });
  return new Promise((resolve, reject) => {
    child.once("message", (m) => (m === "ready" ? resolve(child) : reject(new Error(String(m)))));
    child.once("exit", (code) => reject(new Error(`cluster child exited ${code}`)));
  });
}

/** What each configuration runs: per process `warmUp` sessions, then `sessions` between them. */
export interface Workload {
  sessions: number;
  concurrency: number;
  warmUp: number;
}

/**
 * The benchmark's workload unless told otherwise (the figures in docs/performance.md). The
 * warm-up is where a process's CPU per turn levels off (bench/warmup-curve.ts); the measured
 * window is about five seconds, so one busy moment of a shared machine weighs less in it.
 */
export const DEFAULT_WORKLOAD: Workload = { sessions: 6000, concurrency: 16, warmUp: 4000 };

export async function runConfig(
  store: ClusterRow["store"],
  url: string,
  processes: number,
  { sessions, concurrency, warmUp }: Workload,
  notify = true,
): Promise<ClusterRow> {
  // Started one by one: concurrent first migrations are safe, but this keeps startup quiet.
  const children: ChildProcess[] = [];
  for (let i = 0; i < processes; i++) children.push(await startChild(url, notify));
  try {
    const share = Math.ceil(sessions / processes);
    const dbCpu = store === "postgres" ? await clusterCpu(url) : null;
    const warm = await Promise.all(
      children.map(
        (child) =>
          new Promise<ChildWarm>((resolve) => {
            child.once("message", (m) => resolve(m as ChildWarm));
            child.send({ warmUp, concurrency } satisfies ChildWarmUp);
          }),
      ),
    );
    const warmMs = Math.max(...warm.map((w) => w.wallMs));
    // Every process warmed up: the measured window starts for all of them at once.
    const db0 = dbCpu?.();
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
    const db1 = dbCpu?.();
    const dbMs = db0 && db1 ? db1.totalMs - db0.totalMs : 0;
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
      coldTurnsPerSecond: warm.reduce((n, w) => n + w.warmed, 0) / (warmMs / 1000),
      eventsPerSecond: events / (wallMs / 1000),
      commits: commits.length,
      commitP50Us: percentile(commits, 50),
      commitP99Us: percentile(commits, 99),
      roundTripsPerTurn:
        store === "postgres" ? reports.reduce((n, r) => n + r.roundTrips, 0) / turns : null,
      runtimeCpuMsPerTurn: reports.reduce((n, r) => n + r.cpuMs, 0) / turns,
      dbCpuMsPerTurn: store === "postgres" ? dbMs / turns : null,
      busiestCore: {
        runtime: Math.max(...reports.map((r) => r.cpuMs / r.wallMs)),
        database: db0 && db1 ? busiestMs(db0, db1) / wallMs : null,
      },
      notifiesPerTurn:
        store === "postgres" && notify
          ? reports.reduce((n, r) => n + r.heard, 0) / processes / turns
          : null,
      takeover: null,
      pipelines: reports.flatMap((r) => (r.pipeline === null ? [] : [r.pipeline])),
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

/** Options of `benchCluster`; each has the default the README's figures use. */
export interface ClusterOptions {
  /** Sessions measured per configuration, shared between its processes. */
  sessions?: number;
  /** Sessions each process runs before the measured window (its turns/s are the `cold` column). */
  warmUp?: number;
  concurrency?: number;
  processCounts?: readonly number[];
  /**
   * Every throughput configuration runs this many times, the rounds one after another (SQLite,
   * then each PostgreSQL configuration, then again), so a slow spell of the machine falls on
   * both stores; each row is its configuration's median round.
   */
  rounds?: number;
  takeoverSessions?: number;
  idleSessions?: number;
  durable?: boolean;
}

export async function benchCluster(options: ClusterOptions = {}): Promise<ClusterResult> {
  const defaults = DEFAULT_WORKLOAD;
  const { sessions = defaults.sessions, concurrency = defaults.concurrency } = options;
  const { warmUp = defaults.warmUp } = options;
  const { processCounts = [1, 2, 4], rounds = 3 } = options;
  const work: Workload = { sessions, concurrency, warmUp };
  const { takeoverSessions = 50, idleSessions = 10_000, durable = true } = options;
  const byConfig = new Map<string, ClusterRow[]>();
  const keep = (row: ClusterRow) => {
    const key = `${row.store}/${row.notify}/${row.processes}`;
    byConfig.set(key, [...(byConfig.get(key) ?? []), row]);
  };
  let idle: IdleResult | null = null;
  let remoteTakeover: TakeoverResult | null = null;
  const cluster = await startPrivateCluster();
  try {
    const fresh = async () => cluster.connectionString(await cluster.createDatabase());
    for (let round = 0; round < rounds; round++) {
      const dir = mkdtempSync(join(tmpdir(), "oc-bench-cluster-"));
      try {
        keep(await runConfig("sqlite", join(dir, "data.db"), 1, work));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      keep(await runConfig("postgres", await fresh(), 1, work, false));
      // A fresh database per configuration, so one run's rows do not slow the next.
      for (const processes of processCounts)
        keep(await runConfig("postgres", await fresh(), processes, work));
    }
    const rows = [...byConfig.values()].map(medianRound);
    if (takeoverSessions > 0) {
      for (const row of rows) {
        if (row.store === "postgres" && row.notify && row.processes >= 2)
          row.takeover = await benchTakeover(await fresh(), row.processes, takeoverSessions);
      }
      remoteTakeover = await benchTakeover(await fresh(), 2, takeoverSessions, true);
    }
    if (idleSessions > 0) idle = await benchIdle(await fresh(), idleSessions);
    if (durable) rows.push(...(await durableRows(work)));
    return {
      sessions,
      warmUp,
      concurrencyPerProcess: concurrency,
      rounds,
      rows,
      remoteTakeover,
      idle,
    };
  } finally {
    await cluster.stop();
  }
}

/** The middle item by `key` (the lower of the two middle ones for an even count). */
function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor((items.length - 1) / 2)]!;
}

/** The round with the median turns/s, every round's turns/s beside it. */
function medianRound(rows: ClusterRow[]): ClusterRow {
  const median = medianBy(rows, (r) => r.turnsPerSecond);
  return { ...median, roundsTurnsPerSecond: rows.map((r) => r.turnsPerSecond) };
}

/**
 * The NOTIFY queue lock: a notifying transaction holds it from pre-commit until after its
 * commit, WAL flush included, so with durable commits notifying writes are serialised. The
 * same one-process run without and with NOTIFY on a cluster that flushes every commit.
 */
async function durableRows(work: Workload): Promise<ClusterRow[]> {
  const rows: ClusterRow[] = [];
  const flushing = await startPrivateCluster({ durable: true });
  try {
    for (const notify of [false, true]) {
      const url = flushing.connectionString(await flushing.createDatabase());
      const row = await runConfig("postgres", url, 1, work, notify);
      rows.push({ ...row, durable: true });
    }
  } finally {
    await flushing.stop();
  }
  return rows;
}

/**
 * PostgreSQL with one process against SQLite, round by round: both ran in the same round, so
 * each quotient compares one moment of the machine.
 */
export function onePerSqlite(result: ClusterResult): number[] {
  const sqlite = result.rows.find((r) => r.store === "sqlite")?.roundsTurnsPerSecond;
  const pg = result.rows.find(
    (r) => r.store === "postgres" && r.notify && !r.durable && r.processes === 1,
  )?.roundsTurnsPerSecond;
  if (!sqlite || !pg) return [];
  return pg.map((t, i) => t / sqlite[i]!);
}

/** A row's store as the table names it: `postgres*` without NOTIFY/LISTEN, `(d)` when durable. */
function storeLabel(r: ClusterRow): string {
  return `${r.store === "postgres" && !r.notify ? "postgres*" : r.store}${r.durable ? " (d)" : ""}`;
}

/** Every round's turns/s per configuration, and PostgreSQL (1 process) / SQLite per round. */
function roundNotes(result: ClusterResult): string[] {
  if (result.rounds < 2) return [];
  const perRound = result.rows
    .filter((r) => r.roundsTurnsPerSecond && r.roundsTurnsPerSecond.length > 1)
    .map((r) => {
      const name = storeLabel(r);
      return `${name} ${r.processes}: ${r.roundsTurnsPerSecond!.map((t) => t.toFixed(0)).join(" / ")}`;
    });
  const notes = [`turns/s of each round: ${perRound.join("; ")}`];
  const ratios = onePerSqlite(result);
  if (ratios.length > 0) {
    const median = medianBy(ratios, (x) => x);
    const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
    notes.push(
      `postgres 1 process / sqlite, round by round: ${ratios.map(pct).join(", ")} (median ${pct(median)})`,
    );
  }
  return notes;
}

/** Each PostgreSQL row's pipeline shapes and the range of the flushes its processes timed. */
function pipelineNote(result: ClusterResult): string {
  return result.rows
    .filter((r) => r.pipelines.length > 0)
    .map((r) => {
      const name = `${storeLabel(r)} ${r.processes}`;
      const shapes = [...new Set(r.pipelines.map((p) => `${p.connections}×${p.fill}`))];
      const flushes = r.pipelines.flatMap((p) => (p.flushMs === null ? [] : [p.flushMs]));
      const low = Math.min(...flushes).toFixed(2);
      const high = Math.max(...flushes).toFixed(2);
      const range = low === high ? `${low} ms` : `${low}–${high} ms`;
      const flush =
        flushes.length === 0
          ? "given"
          : Math.max(...flushes) === 0
            ? "commits do not wait"
            : `flush ${range}`;
      return `${name} ${shapes.join(" / ")} (${flush})`;
    })
    .join("; ");
}

/**
 * Each row's busiest runtime and PostgreSQL process, in cores: with one runtime process, one busy
 * connection carries its statements, so a backend near 1.00 is what it waits for.
 */
function busiestNote(result: ClusterResult): string {
  return result.rows
    .map((r) => {
      const name = `${storeLabel(r)} ${r.processes}`;
      const { runtime, database } = r.busiestCore;
      return `${name} ${runtime.toFixed(2)}${database === null ? "" : ` / ${database.toFixed(2)}`}`;
    })
    .join("; ");
}

const ms = (value: number) => (Number.isFinite(value) ? `${(value / 1000).toFixed(2)} s` : "never");

export function clusterTable(result: ClusterResult): string {
  const head =
    `${result.sessions} sessions × 1 turn after ${result.warmUp} warm-up sessions per process, ` +
    `${result.concurrencyPerProcess} in flight per process, ` +
    `each configuration ${result.rounds} ${result.rounds === 1 ? "time" : "times"} (the median round shown)`;
  const lines = [
    "store         procs  turns/s  cold t/s  events/s  commit p50  commit p99  failed  trips/turn  rt cpu/turn  db cpu/turn  notify/turn  takeover p50  takeover p90  finish p90",
    ...result.rows.map((r) => {
      const t = r.takeover;
      return [
        storeLabel(r).padEnd(13),
        String(r.processes).padStart(5),
        r.turnsPerSecond.toFixed(0).padStart(8),
        r.coldTurnsPerSecond.toFixed(0).padStart(9),
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
    ...roundNotes(result),
    "postgres* = one process without NOTIFY/LISTEN (the price of the signal); (d) = fsync on (every commit waits for its WAL on disk)",
    "turns/s = the measured sessions, every process warmed up; cold t/s = the warm-up: fresh processes on a fresh database",
    "trips/turn = PostgreSQL round trips per session with one turn (create, turn, wait), all processes",
    `pipeline (connections × fill, by the flush its store timed) of each PostgreSQL row's median round: ${pipelineNote(result)}`,
    "rt cpu/turn, db cpu/turn = CPU time per turn of the runtime processes and of the PostgreSQL cluster (all its processes)",
    `busiest process, cores over the measured window (runtime, V8's helper threads included / PostgreSQL, one thread: near 1.00 it is the limit) of each row's median round: ${busiestNote(result)}`,
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
