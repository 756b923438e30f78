// @opencomputer/agent/testing: how a project writes scenario tests for its agents
// (`opencomputer/agents/<id>/tests/*.test.ts`, run by `opencomputer test`). Kept off the main
// entry, which is for agent code: nothing here is ever loaded by a deployment.

/** One thing a person does in a scenario, in order. */
export type ScenarioStep =
  | string
  | { send: string }
  | { answer: string; value?: string }
  | { approve: true }
  | { deny: true };

/** An event that must appear (after the previous one matched): a type, or a type and data fields. */
export type EventExpectation = string | { type: string; data?: Record<string, unknown> };

/** A tool call that must appear (after the previous one matched); `input` matches by its fields. */
export interface ToolCallExpectation {
  name: string;
  input?: Record<string, unknown>;
}

/** How the last turn's final text is judged. */
export type TextExpectation =
  | { equals: string }
  | { contains: string | string[] }
  | {
      /** 0 to 1; the scenario fails when it is below `threshold`. Runs in the sandboxed loader. */
      score: (text: string) => number | Promise<number>;
      threshold: number;
    };

export interface ScenarioExpectations {
  /** How the last turn settles (default `completed`). */
  status?: "completed" | "failed" | "cancelled";
  events?: EventExpectation[];
  /** Every tool the agent must call, in order; other calls may come between. */
  toolCalls?: ToolCallExpectation[];
  /** Tools the agent must not call. */
  notCalled?: string[];
  /** The session's result data, compared exactly; `null` means no result. */
  result?: unknown;
  text?: TextExpectation;
}

export interface Scenario {
  name: string;
  /** `script/<name>` plays `opencomputer/scripts/<name>.json` (default: the agent's id). */
  script?: string;
  /** A real model id (`provider/model`) instead of a script. */
  model?: string;
  steps: ScenarioStep[];
  expect?: ScenarioExpectations;
}

const SCENARIO_BRAND = Symbol.for("opencomputer.scenario");

/** Marks a scenario for `opencomputer test`; export it (default or named) from a `.test.ts`. */
export function defineScenario(scenario: Scenario): Scenario {
  Object.defineProperty(scenario, SCENARIO_BRAND, { value: true });
  return scenario;
}

/** Whether a value came from `defineScenario` (of any copy of this package). */
export function isScenario(value: unknown): value is Scenario {
  return typeof value === "object" && value !== null && SCENARIO_BRAND in value;
}
