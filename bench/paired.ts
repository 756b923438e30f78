// The headline ratio, measured paired: after both sides warmed up, one AI SDK run and one engine
// run alternate, each timed on its own. This machine's speed changes by up to 2× within minutes
// (neighbours on the host); measured one after the other, a slow spell lands on one side only and
// moves the ratio by more than the changes it is meant to show. Paired, both sides share it.
import { openEngine } from "./engine-fixture.ts";
import { assertRunEvents } from "./engine-run.ts";
import { aiSdkRun } from "./peers.ts";
import type { Scenario } from "./scenario.ts";
import { type LatencySummary, summarize } from "./stats.ts";

export interface PairedResult {
  aiSdk: LatencySummary;
  engine: LatencySummary;
}

export async function benchPaired(
  scenario: Scenario,
  opts: { warmup: number; runs: number },
): Promise<PairedResult> {
  const aiSdk = aiSdkRun(scenario);
  const engine = await openEngine("normal");
  try {
    let lastSessionId = "";
    const runEngine = async () => {
      lastSessionId = (await engine.runOnce()).sessionId;
    };
    for (let i = 0; i < opts.warmup; i++) {
      await aiSdk();
      await runEngine();
    }
    const aiSdkNs = new Float64Array(opts.runs);
    const engineNs = new Float64Array(opts.runs);
    let aiSdkMs = 0;
    let engineMs = 0;
    for (let i = 0; i < opts.runs; i++) {
      // Alternate which side goes first, so neither always follows the other's garbage.
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const side of order) {
        const t0 = process.hrtime.bigint();
        await (side === 0 ? aiSdk() : runEngine());
        const ns = Number(process.hrtime.bigint() - t0);
        if (side === 0) {
          aiSdkNs[i] = ns;
          aiSdkMs += ns / 1e6;
        } else {
          engineNs[i] = ns;
          engineMs += ns / 1e6;
        }
      }
    }
    await assertRunEvents(engine.runtime, lastSessionId);
    return {
      aiSdk: summarize(aiSdkNs, opts.warmup, aiSdkMs),
      engine: summarize(engineNs, opts.warmup, engineMs),
    };
  } finally {
    await engine.close();
  }
}
