// One long conversation: a single session sent the scenario's question turn after turn, each
// turn a tool call and an answer, every event committed. What a turn costs as the session grows:
// whatever the engine reads per turn in proportion to the session's history shows up as a
// rising p50 from the first turns to the last. A first, unmeasured session warms the process.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createSourceAgents, type Runtime } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { AGENT_ID, SUPPORT_DIR, USER_TEXT } from "./scenario.ts";
import { percentile } from "./stats.ts";

export interface LongSessionResult {
  turns: number;
  /** p50 of the first and the last `window` turns, in µs. */
  window: number;
  firstP50Us: number;
  lastP50Us: number;
  /** lastP50Us / firstP50Us. */
  growth: number;
}

export async function benchLongSession(turns: number): Promise<LongSessionResult> {
  const dir = mkdtempSync(join(tmpdir(), "oc-bench-long-"));
  // The support example's two steps, repeated: the scripted model plays the step numbered by the
  // assistant messages already in the conversation, so turn n plays steps 2n and 2n+1.
  const demo = JSON.parse(
    readFileSync(join(SUPPORT_DIR, "opencomputer", "scripts", "demo.json"), "utf8"),
  ) as { steps: unknown[] };
  const steps = Array.from({ length: turns }, () => demo.steps.slice(0, 2)).flat();
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(join(dir, "opencomputer", "scripts", "long.json"), JSON.stringify({ steps }));

  const store = createSqliteStore({ path: join(dir, "data.db") });
  const runtime = createRuntime({
    store,
    agents: createSourceAgents(SUPPORT_DIR),
    models: createModelResolver({
      // The script is read from the temp directory, not the example's.
      providers: { script: (name, ctx) => createScriptModel(name, { ...ctx, projectDir: dir }) },
      override: "script/long",
    }),
  });
  await runtime.start();
  try {
    // A first session, unmeasured, warms the process up; otherwise the first turns measure the
    // JIT, not the session's length.
    await playSession(runtime, Math.min(turns, 200));
    const times = await playSession(runtime, turns);
    const window = Math.max(1, Math.min(50, Math.floor(turns / 4)));
    const p50 = (a: Float64Array) => percentile(Float64Array.from(a).sort(), 50);
    const firstP50Us = p50(times.subarray(0, window));
    const lastP50Us = p50(times.subarray(turns - window));
    return { turns, window, firstP50Us, lastP50Us, growth: lastP50Us / firstP50Us };
  } finally {
    await runtime.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One session, `turns` turns one after another; the time of each turn (send → settled), µs. */
async function playSession(runtime: Runtime, turns: number): Promise<Float64Array> {
  const { session } = await runtime.sessions.create({ agentId: AGENT_ID });
  const times = new Float64Array(turns);
  for (let i = 0; i < turns; i++) {
    const t0 = process.hrtime.bigint();
    const { turnId } = await runtime.sessions.sendTurn(session.id, { text: USER_TEXT });
    const turn = await runtime.sessions.waitForTurn(session.id, turnId);
    times[i] = Number(process.hrtime.bigint() - t0) / 1000;
    if (turn.status !== "completed") {
      throw new Error(`turn ${i + 1} ended ${turn.status}: ${JSON.stringify(turn.error)}`);
    }
  }
  return times;
}

export function longSessionTable(r: LongSessionResult): string {
  return [
    `long session: ${r.turns} turns in one session`,
    `  p50 of turns 1–${r.window}: ${r.firstP50Us.toFixed(0)} µs`,
    `  p50 of turns ${r.turns - r.window + 1}–${r.turns}: ${r.lastP50Us.toFixed(0)} µs`,
    `  growth: ${r.growth.toFixed(2)}×`,
  ].join("\n");
}
