// How `opencomputer test` shows its outcome: a table for people (one row per scenario, each
// failure under its row as `check: expected …, got …`) or one JSON document for CI.

import type { Failure } from "./check.ts";

export interface ScenarioOutcome {
  agent: string;
  file: string;
  name: string;
  passed: boolean;
  failures: Failure[];
  sessionId?: string;
  durationMs: number;
}

const show = (v: unknown) => {
  const text = typeof v === "string" ? JSON.stringify(v) : (JSON.stringify(v) ?? "undefined");
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
};

export function formatTable(outcomes: ScenarioOutcome[]): string {
  const names = outcomes.map((o) => `${o.agent} › ${o.name}`);
  const width = Math.max("scenario".length, ...names.map((n) => n.length));
  const lines = [`${"scenario".padEnd(width)}  result  file`];
  for (const [i, o] of outcomes.entries()) {
    lines.push(`${names[i]!.padEnd(width)}  ${o.passed ? "pass  " : "FAIL  "}  ${o.file}`);
    for (const f of o.failures)
      lines.push(`    ${f.check}: expected ${show(f.expected)}, got ${show(f.got)}`);
  }
  const failed = outcomes.filter((o) => !o.passed).length;
  lines.push("", `${outcomes.length - failed} passed, ${failed} failed`);
  return `${lines.join("\n")}\n`;
}

export function formatJson(outcomes: ScenarioOutcome[]): string {
  const failed = outcomes.filter((o) => !o.passed).length;
  return `${JSON.stringify({ passed: outcomes.length - failed, failed, scenarios: outcomes })}\n`;
}
