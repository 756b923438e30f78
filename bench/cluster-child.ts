// One runtime process of the cluster benchmark (bench/cluster.ts forks it): a runtime on the
// store named by argv (postgres URL, with its LISTEN/NOTIFY signal, or a SQLite path) running
// the support example on its scripted model. On "go" it runs its share of sessions — create,
// one turn, wait — `concurrency` at a time, timing every store commit, and reports back.

import { createModelResolver, createScriptModel } from "@opencomputer/models";
import {
  createRuntime,
  createSourceAgents,
  type Store,
  type WorkSignal,
} from "@opencomputer/runtime";
import { createPostgresSignal, createPostgresStore } from "@opencomputer/store-postgres";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { AGENT_ID, SCRIPT_MODEL, SUPPORT_DIR, USER_TEXT } from "./scenario.ts";

export interface ChildGo {
  sessions: number;
  concurrency: number;
}

export interface ChildReport {
  turns: number;
  failedTurns: number;
  events: number;
  wallMs: number;
  /** Every commit's duration in microseconds (apply, applyWithLease, createSession). */
  commitUs: number[];
}

const url = process.argv[2]!;
/** `nonotify`: one process without NOTIFY and LISTEN, to price the signal. */
const notify = process.argv[3] !== "nonotify";
const send = (message: unknown) => process.send!(message);

async function open(): Promise<{
  store: Store & { close(): Promise<void> };
  signal?: WorkSignal & { close(): Promise<void> };
}> {
  if (!/^postgres(ql)?:\/\//.test(url)) return { store: createSqliteStore({ path: url }) };
  const store = await createPostgresStore({ connectionString: url, pool: { max: 10 }, notify });
  if (!notify) return { store };
  const signal = await createPostgresSignal({ connectionString: url });
  return { store, signal };
}

const { store, signal } = await open();
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
  agents: createSourceAgents(SUPPORT_DIR),
  models: createModelResolver({ providers: { script: createScriptModel }, override: SCRIPT_MODEL }),
  ...(signal ? { signal } : {}),
});
await runtime.start();

async function oneSession(): Promise<boolean> {
  const { session } = await runtime.sessions.create({ agentId: AGENT_ID });
  const sent = await runtime.sessions.sendTurn(session.id, { text: USER_TEXT });
  const turn = await runtime.sessions.waitForTurn(session.id, sent.turnId, { timeoutMs: 120_000 });
  return turn.status === "completed";
}

process.on("message", async (message: ChildGo | "close") => {
  if (message === "close") {
    await runtime.close();
    await signal?.close();
    await store.close();
    process.exit(0);
  }
  const go = message as ChildGo;
  // A warm-up session so module loading is not counted.
  await oneSession();
  commitUs.length = 0;
  events = 0;
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
  const report: ChildReport = {
    turns: go.sessions,
    failedTurns: failed,
    events,
    wallMs: performance.now() - t0,
    commitUs,
  };
  send(report);
});
send("ready");
