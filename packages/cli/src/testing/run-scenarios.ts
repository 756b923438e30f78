// Runs each scenario on the embedded runtime (the one `opencomputer session` uses), on a store
// of its own in a temporary directory so tests never touch `.opencomputer/data.db`, with the
// scenario's model forced for every call.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDeploymentAgents } from "@opencomputer/build";
import { openEmbedded } from "../embedded.ts";
import { cliExecution, startExecution } from "../execution.ts";
import { checkScenario } from "./check.ts";
import type { Discovered } from "./discover.ts";
import { driveScenario } from "./drive.ts";
import type { ScenarioOutcome } from "./report.ts";
import type { ScenarioSpec } from "./scenario.ts";

export async function runScenario(
  projectDir: string,
  spec: ScenarioSpec,
  found: Discovered,
): Promise<ScenarioOutcome> {
  const dir = mkdtempSync(join(tmpdir(), "oc-test-"));
  const started = Date.now();
  const opened = openEmbedded(projectDir, createDeploymentAgents, {
    dbPath: join(dir, "test.db"),
    model: spec.model,
    // Agent code in worker processes, sandboxed where bubblewrap is, as `opencomputer dev` runs it.
    execution: (agents) => startExecution(cliExecution(projectDir), agents),
  });
  const base = { agent: spec.agentId, file: spec.file, name: spec.name };
  try {
    await opened.runtime.start();
    const seen = await driveScenario(opened.runtime, spec);
    const failures = await checkScenario(spec, seen, (ref, text) => found.score(spec, ref, text));
    return {
      ...base,
      passed: failures.length === 0,
      failures,
      sessionId: seen.sessionId,
      durationMs: Date.now() - started,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ...base,
      passed: false,
      failures: [{ check: "run", expected: "the scenario runs to its end", got: message }],
      durationMs: Date.now() - started,
    };
  } finally {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
