// What a scenario expects, held against what it observed. Each unmet expectation becomes one
// failure saying what was checked, what was expected and what came; a scenario passes with none.

import { isDeepStrictEqual } from "node:util";
import type { Observed } from "./drive.ts";
import type { ScenarioSpec } from "./scenario.ts";

export interface Failure {
  check: string;
  expected: unknown;
  got: unknown;
}

/** `actual` has every field of `expected` (recursively for objects; lists and values exactly). */
export function matches(actual: unknown, expected: unknown): boolean {
  if (typeof expected !== "object" || expected === null || Array.isArray(expected))
    return isDeepStrictEqual(actual, expected);
  if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false;
  return Object.entries(expected).every(([k, v]) =>
    matches((actual as Record<string, unknown>)[k], v),
  );
}

/** The index in `items` after the first at or past `from` that `pick` accepts, or -1. */
function findFrom<T>(items: T[], from: number, pick: (item: T) => boolean): number {
  for (let i = from; i < items.length; i++) if (pick(items[i]!)) return i + 1;
  return -1;
}

export async function checkScenario(
  spec: ScenarioSpec,
  seen: Observed,
  score: (ref: number, text: string) => Promise<number>,
): Promise<Failure[]> {
  const failures: Failure[] = [];
  const { expect } = spec;
  if (seen.status !== expect.status)
    failures.push({ check: "status", expected: expect.status, got: seen.status });

  let at = 0;
  for (const [i, e] of expect.events.entries()) {
    const next = findFrom(
      seen.events,
      at,
      (ev) => ev.type === e.type && (!e.data || matches(ev.data, e.data)),
    );
    if (next < 0) {
      const sameType = seen.events
        .slice(at)
        .filter((ev) => ev.type === e.type)
        .map((ev) => ev.data);
      failures.push({
        check: `events[${i}]`,
        expected: e,
        got:
          sameType.length > 0
            ? { [e.type]: sameType.slice(0, 3) }
            : `no ${e.type} after the previous match`,
      });
      break;
    }
    at = next;
  }

  at = 0;
  for (const [i, c] of expect.toolCalls.entries()) {
    const next = findFrom(
      seen.toolCalls,
      at,
      (call) => call.name === c.name && (!c.input || matches(call.input, c.input)),
    );
    if (next < 0) {
      failures.push({
        check: `toolCalls[${i}]`,
        expected: c,
        got: seen.toolCalls.slice(at).map((call) => ({ name: call.name, input: call.input })),
      });
      break;
    }
    at = next;
  }
  for (const name of expect.notCalled) {
    const calls = seen.toolCalls.filter((c) => c.name === name);
    if (calls.length > 0)
      failures.push({
        check: "notCalled",
        expected: `no call to ${name}`,
        got: calls.map((c) => c.input),
      });
  }

  if ("result" in expect && !isDeepStrictEqual(seen.result, expect.result))
    failures.push({ check: "result", expected: expect.result, got: seen.result });

  const text = expect.text;
  if (text && "equals" in text && seen.text !== text.equals)
    failures.push({ check: "text equals", expected: text.equals, got: seen.text });
  if (text && "contains" in text) {
    const missing = text.contains.filter((c) => !seen.text.includes(c));
    if (missing.length > 0)
      failures.push({ check: "text contains", expected: missing, got: seen.text });
  }
  if (text && "score" in text) {
    try {
      const value = await score(text.score, seen.text);
      if (!(value >= text.threshold))
        failures.push({ check: "text score", expected: `>= ${text.threshold}`, got: value });
    } catch (error) {
      failures.push({
        check: "text score",
        expected: `>= ${text.threshold}`,
        got: `error: ${(error as Error).message}`,
      });
    }
  }
  return failures;
}
