// `opencomputer test [agent] [--json] [--filter TEXT] [--crash [--runs N] [--seed S]]`: the
// scenario tests beside each agent (docs/testing.md).

import { resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { buildProject, formatErrors } from "@opencomputer/build";
import { parse } from "../args.ts";
import { runCrashMode } from "../testing/crash/run-crash.ts";
import { discoverScenarios } from "../testing/discover.ts";
import { formatJson, formatTable, type ScenarioOutcome } from "../testing/report.ts";
import { runScenario } from "../testing/run-scenarios.ts";

export const TEST_USAGE = `opencomputer test [agent] [--dir DIR] [--json] [--filter TEXT] [--crash [--runs N] [--seed S]]
  e.g.  opencomputer test                      every scenario of every agent
        opencomputer test support --json       one agent's, as JSON for CI
        opencomputer test --crash --runs 20    kill the runtime at random points, check recovery`;

export async function testCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, TEST_USAGE);
  const projectDir = resolve(values.dir ?? ".");
  const json = values.json ?? false;
  const built = await buildProject(projectDir);
  if (built.errors.length > 0) {
    if (json)
      process.stdout.write(`${JSON.stringify({ type: "build.failed", errors: built.errors })}\n`);
    else process.stderr.write(`${formatErrors(built.errors)}\n`);
    return 1;
  }
  const found = await discoverScenarios(projectDir, positionals[0], values.filter);
  try {
    if (found.scenarios.length === 0) {
      process.stderr.write(
        "no scenarios found (opencomputer/agents/<id>/tests/*.test.ts or *.json)\n",
      );
      return 1;
    }
    if (values.crash) {
      return await runCrashMode(projectDir, found.scenarios, {
        runs: positiveInt(values.runs, "--runs", 10),
        seed: positiveInt(values.seed, "--seed", Math.floor(Math.random() * 2 ** 31)),
        json,
      });
    }
    const outcomes: ScenarioOutcome[] = [];
    for (const spec of found.scenarios) outcomes.push(await runScenario(projectDir, spec, found));
    process.stdout.write(json ? formatJson(outcomes) : formatTable(outcomes));
    return outcomes.every((o) => o.passed) ? 0 : 1;
  } finally {
    found.close();
  }
}

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new OpenComputerError("usage", `${flag} takes a whole number; got "${value}"`, {
      path: flag,
    });
  }
  return n;
}

const OPTIONS = {
  dir: { type: "string" },
  json: { type: "boolean" },
  filter: { type: "string" },
  crash: { type: "boolean" },
  runs: { type: "string" },
  seed: { type: "string" },
} as const;
