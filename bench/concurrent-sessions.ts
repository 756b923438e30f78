// Many sessions at once in one process: every session is created and sent its turn before any
// is waited on, then all are awaited. Measures wall time and what the process holds in memory.
import { type Durability, openEngine } from "./engine-fixture.ts";
import { readPeakRss, startPeakRss } from "./peak-rss.ts";
import { AGENT_ID, USER_TEXT } from "./scenario.ts";
import { collectGarbage, mib } from "./stats.ts";

export interface ConcurrentResult {
  sessions: number;
  durability: Durability;
  /** create + sendTurn for every session, all in flight together. */
  startMs: number;
  /** From the last sendTurn returning to every turn settled. */
  settleMs: number;
  totalMs: number;
  sessionsPerSecond: number;
  rssBeforeMiB: number;
  rssAfterMiB: number;
  /** RSS once the runtime is closed and (with --expose-gc) garbage collected. */
  rssAfterCloseMiB: number;
  peakRssMiB: number;
  peakRssScope: "window" | "process";
  heapUsedBeforeMiB: number;
  heapUsedAfterMiB: number;
}

export async function benchConcurrent(sessions: number): Promise<ConcurrentResult> {
  const durability: Durability = "normal";
  const engine = await openEngine(durability);
  const { runtime } = engine;
  let closed = false;
  try {
    // One run first so the agent's source is loaded and compiled before anything is counted.
    await engine.runOnce();
    collectGarbage();
    const before = process.memoryUsage();
    startPeakRss();

    const t0 = performance.now();
    const started = await Promise.all(
      Array.from({ length: sessions }, async () => {
        const { session } = await runtime.sessions.create({ agentId: AGENT_ID });
        const sent = await runtime.sessions.sendTurn(session.id, { text: USER_TEXT });
        return { sessionId: session.id, turnId: sent.turnId };
      }),
    );
    const t1 = performance.now();
    const turns = await Promise.all(
      started.map((s) =>
        runtime.sessions.waitForTurn(s.sessionId, s.turnId, { timeoutMs: 600_000 }),
      ),
    );
    const t2 = performance.now();

    const after = process.memoryUsage();
    const peak = readPeakRss();
    const notCompleted = turns.filter((t) => t.status !== "completed");
    if (notCompleted.length > 0) {
      throw new Error(`${notCompleted.length} of ${sessions} turns did not complete`);
    }
    await engine.close();
    closed = true;
    collectGarbage();
    const afterClose = process.memoryUsage.rss();

    return {
      sessions,
      durability,
      startMs: t1 - t0,
      settleMs: t2 - t1,
      totalMs: t2 - t0,
      sessionsPerSecond: sessions / ((t2 - t0) / 1000),
      rssBeforeMiB: mib(before.rss),
      rssAfterMiB: mib(after.rss),
      rssAfterCloseMiB: mib(afterClose),
      peakRssMiB: mib(peak.bytes),
      peakRssScope: peak.scope,
      heapUsedBeforeMiB: mib(before.heapUsed),
      heapUsedAfterMiB: mib(after.heapUsed),
    };
  } finally {
    if (!closed) await engine.close();
  }
}
