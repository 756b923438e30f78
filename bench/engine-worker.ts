// The cost of the process boundary: the `engine` scenario (create → sendTurn → waitForTurn on
// SQLite, durability normal) with the agent's code in a worker process. Each run crosses it
// three times: two renders and the tool's run (with one progress report each way). The
// worker starts during the warm-up, so the figure is the steady-state cost, not a cold start.
import { benchEngine, type EngineResult } from "./engine-run.ts";

export function benchEngineWorker(opts: { warmup: number; runs: number }): Promise<EngineResult> {
  return benchEngine(
    "normal",
    { ...opts, warmup: Math.max(1, opts.warmup) },
    {
      execution: "worker",
    },
  );
}
