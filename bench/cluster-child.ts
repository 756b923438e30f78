// One runtime process of the cluster benchmark (bench/cluster.ts forks it): a runtime on the
// store named by argv (postgres URL, with its LISTEN/NOTIFY signal, or a SQLite path).
//
// Throughput mode (the default) runs the support example on its scripted model: on "go" it runs
// its share of sessions — create, one turn, wait — `concurrency` at a time, timing every store
// commit and counting every PostgreSQL round trip (`pg.Client#query`), and reports back.
//
// Takeover mode (`takeover` in argv) runs the cluster tests' fixture (its `step` tool sleeps
// OC_STEP_MS): on `{ start }` it sends that many turns at once and answers when every one is
// running, so the parent can SIGKILL it mid-turn and watch the others take over.
//
// On "count" it answers with the round trips it sent so far, so the idle benchmark can count
// what a process sends while it has nothing to do.

import { fileURLToPath } from "node:url";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import {
  createRuntime,
  createSourceAgents,
  type Store,
  type WorkSignal,
} from "@opencomputer/runtime";
import {
  createPostgresSignal,
  createPostgresStore,
  type PostgresStore,
} from "@opencomputer/store-postgres";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import pg from "pg";
import { BENCH_LEASE_MS } from "./cluster-config.ts";
import { AGENT_ID, SCRIPT_MODEL, SUPPORT_DIR, USER_TEXT } from "./scenario.ts";

export interface ChildGo {
  sessions: number;
  concurrency: number;
}

/** Runs `warmUp` sessions, `concurrency` at a time, then answers with a ChildWarm. */
export interface ChildWarmUp {
  warmUp: number;
  concurrency: number;
}

/** How long the warm-up took: its turns/s are a fresh process's (the `cold` column). */
export interface ChildWarm {
  warmed: number;
  wallMs: number;
}

/** Takeover mode: send `start` turns and answer with a ChildStarted once all run. */
export interface ChildStart {
  start: number;
}

export interface ChildStarted {
  sessionIds: string[];
  /** Wall time of one undisturbed turn of the same agent, run just before, in ms. */
  normalTurnMs: number;
}

export interface ChildReport {
  turns: number;
  failedTurns: number;
  events: number;
  wallMs: number;
  /** Every commit's duration in microseconds (apply, applyWithLease, createSession). */
  commitUs: number[];
  /** PostgreSQL round trips (queries sent) during the measured runs; 0 on SQLite. */
  roundTrips: number;
  /** This process's CPU time (user + system) during the measured runs, ms. */
  cpuMs: number;
  /** Commit notifications this process's signal heard during the measured runs. */
  heard: number;
  /** The PostgreSQL store's pipeline as it chose it; null on SQLite. */
  pipeline: PostgresStore["pipelineShape"];
}

/** The cluster tests' fixture: a `worker` agent whose `step` tool sleeps OC_STEP_MS. */
export const TAKEOVER_DIR = fileURLToPath(
  new URL("../packages/store-postgres/test/cluster/fixture", import.meta.url),
);

const url = process.argv[2]!;
/** `nonotify`: one process without NOTIFY and LISTEN, to price the signal. */
const notify = !process.argv.includes("nonotify");
const takeover = process.argv.includes("takeover");
/**
 * `remote`: a runtime id without this process's incarnation, so no other process can judge it
 * dead from /proc: how a runtime on another machine is taken over (its lease must expire).
 */
const remote = process.argv.includes("remote");
const send = (message: unknown) => process.send!(message);
// Every query node-postgres sends is one round trip (it does not pipeline): pool.query and a
// transaction's statements all go through Client#query.
let roundTrips = 0;
const clientProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const query = clientProto.query;
/** A query as node-postgres gets it: a statement, or a SyncGroup of them (its `parts`). */
interface Sent {
  text?: string;
  values?: unknown[];
  parts?: Sent[];
}
/**
 * The writes a statement carries: a call of `oc_write_many` (write-many.ts) one per session, as
 * many as its 16th parameter (the writes' session masks, write-many-function.ts) has elements.
 */
const writesIn = (q: Sent): number =>
  q.text?.includes("oc_write_many(") ? (q.values![15] as unknown[]).length : 1;
clientProto.query = function (this: pg.Client, ...args: unknown[]) {
  // A group of statements under one Sync (sync-group.ts) counts as each of its statements, and
  // a shared write call as each of its writes: this counts each session's round trips, not the
  // connection's.
  const sent = (args[0] ?? {}) as Sent;
  if (sent.parts !== undefined) for (const part of sent.parts) roundTrips += writesIn(part);
  else roundTrips += writesIn(sent);
  return query.apply(this, args);
};

async function open(): Promise<{
  store: Store & { close(): Promise<void> };
  signal?: WorkSignal & { close(): Promise<void> };
}> {
  if (!/^postgres(ql)?:\/\//.test(url)) return { store: createSqliteStore({ path: url }) };
  // The pipeline sized as `opencomputer server` reads it, for A/B runs of its two shapes.
  const size = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);
  const pipeline = {
    connections: size("OPENCOMPUTER_PG_CONNECTIONS"),
    fill: size("OPENCOMPUTER_PG_FILL"),
  };
  const store = await createPostgresStore({
    connectionString: url,
    pool: { max: 10 },
    notify,
    pipeline,
    // `OC_COMBINE_WRITES=0` sends every write alone, for A/B runs of write-many.ts.
    combineWrites: process.env.OC_COMBINE_WRITES !== "0",
  });
  if (!notify) return { store };
  const signal = await createPostgresSignal({ connectionString: url });
  return { store, signal };
}

const { store, signal } = await open();
// Every process hears every notification: per process, this counts the notifying commits.
let heard = 0;
signal?.listen((s) => {
  if (s.kind === "commit") heard++;
});
const commitUs: number[] = [];
let events = 0;
// Times the three writes a turn makes; reads are not commits.
for (const name of ["apply", "applyWithLease", "createSession"] as const) {
  const original = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
  (store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
    const t0 = process.hrtime.bigint();
    const out = await original(...args);
    commitUs.push(Number(process.hrtime.bigint() - t0) / 1000);
    if (Array.isArray(out)) events += out.length;
    else if (out && typeof out === "object" && "events" in out)
      events += (out as { events: unknown[] }).events.length;
    return out;
  };
}
const runtime = createRuntime({
  store,
  agents: createSourceAgents(takeover ? TAKEOVER_DIR : SUPPORT_DIR),
  models: createModelResolver({
    providers: { script: createScriptModel },
    // The fixture's agent names its own script (script/work).
    override: takeover ? undefined : SCRIPT_MODEL,
  }),
  leaseMs: BENCH_LEASE_MS,
  ...(remote ? { runtimeId: `bench-remote-${process.pid}` } : {}),
  ...(signal ? { signal } : {}),
});
await runtime.start();
const agentId = takeover ? "worker" : AGENT_ID;
const text = takeover ? "Run the steps." : USER_TEXT;

async function oneSession(): Promise<boolean> {
  const { session } = await runtime.sessions.create({ agentId });
  const sent = await runtime.sessions.sendTurn(session.id, { text });
  const turn = await runtime.sessions.waitForTurn(session.id, sent.turnId, { timeoutMs: 120_000 });
  return turn.status === "completed";
}

async function startTurns(count: number): Promise<ChildStarted> {
  const t0 = performance.now();
  await oneSession();
  const normalTurnMs = performance.now() - t0;
  const sessionIds = await Promise.all(
    Array.from({ length: count }, async () => {
      const { session } = await runtime.sessions.create({ agentId });
      const sent = await runtime.sessions.sendTurn(session.id, { text });
      if (sent.status !== "running") throw new Error(`turn ${sent.turnId} is ${sent.status}`);
      return session.id;
    }),
  );
  return { sessionIds, normalTurnMs };
}

/**
 * Warm-up at the measured concurrency, so module loading, V8's compilation of the hot paths and
 * each backend's first plans are not counted. It takes about four thousand sessions
 * (bench/warmup-curve.ts): V8 keeps optimising functions that run once or twice a session until
 * then, and a process's CPU per turn after 1,000 is still a quarter to a half more than after
 * 4,000. With 4 processes each pays that alone, inside a quarter of the window, so a short
 * warm-up made more processes look slower. The parent waits for every process's warm-up before
 * it starts the measured window (and the database CPU count).
 */
async function warmUp({ warmUp: sessions, concurrency }: ChildWarmUp): Promise<ChildWarm> {
  let warm = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (warm < sessions) {
        warm++;
        await oneSession();
      }
    }),
  );
  return { warmed: warm, wallMs: performance.now() - t0 };
}

async function throughput(go: ChildGo): Promise<ChildReport> {
  commitUs.length = 0;
  events = 0;
  roundTrips = 0;
  heard = 0;
  const cpu0 = process.cpuUsage();
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: go.concurrency }, async () => {
      while (next < go.sessions) {
        next++;
        if (!(await oneSession())) failed++;
      }
    }),
  );
  return {
    turns: go.sessions,
    failedTurns: failed,
    events,
    wallMs: performance.now() - t0,
    commitUs,
    roundTrips,
    heard,
    cpuMs: (({ user, system }) => (user + system) / 1000)(process.cpuUsage(cpu0)),
    pipeline: (store as Partial<Pick<PostgresStore, "pipelineShape">>).pipelineShape ?? null,
  };
}

process.on("message", async (message: ChildGo | ChildStart | ChildWarmUp | "close" | "count") => {
  // The round trips so far (the idle benchmark reads it twice and takes the difference).
  if (message === "count") return send({ roundTrips });
  if (message === "close") {
    await runtime.close();
    await signal?.close();
    await store.close();
    process.exit(0);
  }
  if ("warmUp" in message) send(await warmUp(message));
  else if ("start" in message) send(await startTurns(message.start));
  else send(await throughput(message));
});
send("ready");
