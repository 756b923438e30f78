// The DESIGN target: one run of the support agent through the engine, every event committed to
// SQLite before the next step, measured run after run.
import type { Runtime } from "@opencomputer/runtime";
import type { SqliteStoreOptions } from "@opencomputer/store-sqlite";
import { type Durability, type EngineOptions, openEngine } from "./engine-fixture.ts";
import { type LatencySummary, measure, percentile } from "./stats.ts";

/**
 * Events one run must leave in the store, in this order (others may come between). Checked on
 * the last run, so a run that skipped a write cannot look fast.
 */
const REQUIRED_EVENTS = [
  "session.created",
  "message.received",
  "turn.started",
  "agent.rendered",
  "tool.started",
  "tool.completed",
  "agent.rendered",
  "message.completed",
  "turn.completed",
];

function hasInOrder(types: readonly string[], required: readonly string[]): boolean {
  let at = 0;
  for (const type of types) if (type === required[at]) at++;
  return at === required.length;
}

/** Throws unless the session's events hold REQUIRED_EVENTS in order; returns how many it has. */
export async function assertRunEvents(runtime: Runtime, sessionId: string): Promise<number> {
  const events = await runtime.sessions.events(sessionId);
  const types = events.map((e) => e.type);
  if (!hasInOrder(types, REQUIRED_EVENTS)) {
    throw new Error(`the engine committed unexpected events for one run: ${types.join(", ")}`);
  }
  return events.length;
}

export interface EngineResult extends LatencySummary {
  durability: Durability;
  eventsPerRun: number;
  /** p50 of each API call within a measured run, in µs: where a run's time goes. */
  phasesP50Us: { create: number; sendTurn: number; waitForTurn: number };
}

export async function benchEngine(
  durability: Durability,
  opts: { warmup: number; runs: number },
  extra: EngineOptions = {},
  storeOptions: Partial<SqliteStoreOptions> = {},
): Promise<EngineResult> {
  const engine = await openEngine(durability, extra, storeOptions);
  try {
    const total = opts.warmup + opts.runs;
    const creates = new Float64Array(total);
    const sends = new Float64Array(total);
    const waits = new Float64Array(total);
    let n = 0;
    const record = (create: number, send: number, wait: number) => {
      creates[n] = create;
      sends[n] = send;
      waits[n] = wait;
      n++;
    };
    let lastSessionId = "";
    const summary = await measure(async () => {
      lastSessionId = (await engine.runOnce(record)).sessionId;
    }, opts);
    // Only the measured runs, which come after the warm-up ones.
    const p50 = (a: Float64Array) => percentile(a.subarray(opts.warmup).sort(), 50) / 1000;
    const eventsPerRun = await assertRunEvents(engine.runtime, lastSessionId);
    return {
      ...summary,
      durability,
      eventsPerRun,
      phasesP50Us: { create: p50(creates), sendTurn: p50(sends), waitForTurn: p50(waits) },
    };
  } finally {
    await engine.close();
  }
}
