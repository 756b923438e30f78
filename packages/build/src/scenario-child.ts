// Runs in a child process (`node --import tsx scenario-child.ts`), confined as tool modules are
// while the build loads them: imports each scenario test module, sends back the scenarios it
// exports as plain data (a scoring function becomes `{ $score: n }`), then answers scoring
// requests (`{ id, file, score, text }`) by calling that function here, never in the CLI's
// process. Never imported by the build or the CLI themselves.

import { pathToFileURL } from "node:url";
import { isScenario } from "@opencomputer/agent/testing";
import { awaitKill } from "./child-end.ts";
import type { ScenarioLoadMessage, ScoreAnswer, ScoreRequest } from "./scenario-modules.ts";

type ScoreFn = (text: string) => number | Promise<number>;
const scorers = new Map<string, ScoreFn[]>();

/** The scenario as data: functions are replaced by references this process keeps. */
function toData(file: string, scenario: object): unknown {
  return JSON.parse(
    JSON.stringify(scenario, (_key, value: unknown) => {
      if (typeof value !== "function") return value;
      const list = scorers.get(file) ?? [];
      list.push(value as ScoreFn);
      scorers.set(file, list);
      return { $score: list.length - 1 };
    }),
  );
}

async function load(files: string[]): Promise<ScenarioLoadMessage> {
  const out: ScenarioLoadMessage = [];
  for (const file of files) {
    try {
      const ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const seen = new Set<unknown>();
      const scenarios: Array<{ export: string; scenario: unknown }> = [];
      // The default export first, then named ones in their order.
      for (const [name, value] of [["default", ns.default], ...Object.entries(ns)] as const) {
        const list = Array.isArray(value) ? value : [value];
        for (const item of list) {
          if (!isScenario(item) || seen.has(item)) continue;
          seen.add(item);
          scenarios.push({ export: name, scenario: toData(file, item) });
        }
      }
      out.push({ file, scenarios });
    } catch (error) {
      out.push({ file, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return out;
}

async function score(request: ScoreRequest): Promise<ScoreAnswer> {
  const fn = scorers.get(request.file)?.[request.score];
  if (!fn) return { id: request.id, error: `no scoring function #${request.score}` };
  try {
    const value = await fn(request.text);
    return typeof value === "number" && Number.isFinite(value)
      ? { id: request.id, value }
      : { id: request.id, error: `the scoring function returned ${String(value)}, not a number` };
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
}

async function main(): Promise<void> {
  const files = JSON.parse(process.argv[2] ?? "[]") as string[];
  const loaded = await load(files);
  process.on("message", (message) => {
    void score(message as ScoreRequest).then((answer) => process.send?.(answer));
  });
  process.send?.({ loaded });
  awaitKill();
}

void main();
