// The DESIGN target: one run of the support agent through the engine, every event committed to
// SQLite before the next step, measured run after run.
import { type Durability, openEngine } from "./engine-fixture.ts";
import { type LatencySummary, measure } from "./stats.ts";

/** The events one run must leave in the store, in order. */
const EXPECTED_EVENTS = [
  "session.created",
  "message.received",
  "turn.queued",
  "turn.started",
  "session.status_changed",
  "agent.rendered",
  "message.completed",
  "usage.recorded",
  "tool.started",
  "tool.completed",
  "agent.rendered",
  "message.completed",
  "usage.recorded",
  "turn.completed",
  "session.status_changed",
];

export interface EngineResult extends LatencySummary {
  durability: Durability;
  eventsPerRun: number;
}

export async function benchEngine(
  durability: Durability,
  opts: { warmup: number; runs: number },
): Promise<EngineResult> {
  const engine = await openEngine(durability);
  try {
    let lastSessionId = "";
    const summary = await measure(async () => {
      lastSessionId = (await engine.runOnce()).sessionId;
    }, opts);
    // Read back what the last run committed, so a run that skipped a write cannot look fast.
    const events = await engine.runtime.sessions.events(lastSessionId);
    const types = events.map((e) => e.type);
    if (types.join(" ") !== EXPECTED_EVENTS.join(" ")) {
      throw new Error(`the engine committed unexpected events for one run: ${types.join(", ")}`);
    }
    return { ...summary, durability, eventsPerRun: events.length };
  } finally {
    await engine.close();
  }
}
