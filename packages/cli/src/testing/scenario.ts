// A scenario as `opencomputer test` runs it, checked from either source: a `.json` test file
// (parsed here) or a `.test.ts` module (its `defineScenario` values, sent as data by the
// sandboxed loader, scoring functions as `{ $score: n }`). Anything malformed is a
// `test_file_invalid` error naming the file and the JSON path at fault.

import { OpenComputerError } from "@opencomputer/agent";

export type Step =
  | { kind: "send"; text: string }
  | { kind: "answer"; text: string; value?: string }
  | { kind: "decide"; decision: "approved" | "denied" };

export type TextCheck =
  | { equals: string }
  | { contains: string[] }
  | { score: number; threshold: number };

export type EventCheck = { type: string; data?: Record<string, unknown> };

export interface ScenarioSpec {
  /** `<file relative to the project>` plus `#<n>` when the file holds several. */
  file: string;
  agentId: string;
  name: string;
  /** The model id the runtime uses for every call (`script/<name>` or a real one). */
  model: string;
  steps: Step[];
  expect: {
    status: "completed" | "failed" | "cancelled";
    events: EventCheck[];
    toolCalls: Array<{ name: string; input?: Record<string, unknown> }>;
    notCalled: string[];
    result?: unknown;
    text?: TextCheck;
  };
}

export function invalid(file: string, path: string, message: string): OpenComputerError {
  return new OpenComputerError("test_file_invalid", `${file}: ${path}: ${message}`, {
    path,
    file,
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks one scenario's data (from JSON or a loaded module) and fills in the defaults. */
export function checkScenario(
  data: unknown,
  where: { file: string; agentId: string; path: string },
): ScenarioSpec {
  const { file, agentId, path } = where;
  const bad = (at: string, message: string) => invalid(file, `${path}${at}`, message);
  if (!isObject(data)) throw bad("", "a scenario is an object { name, steps, expect? }");
  const known = new Set(["name", "script", "model", "steps", "expect"]);
  for (const key of Object.keys(data))
    if (!known.has(key)) throw bad(`.${key}`, `unknown field (fields: ${[...known].join(", ")})`);
  if (typeof data.name !== "string" || data.name.trim() === "")
    throw bad(".name", "give the scenario a name (a non-empty string)");
  if (
    data.script !== undefined &&
    (typeof data.script !== "string" || !/^[\w.-]+$/.test(data.script))
  )
    throw bad(".script", "the name of a script in opencomputer/scripts (letters, digits, _ . -)");
  if (data.model !== undefined && (typeof data.model !== "string" || !data.model.includes("/")))
    throw bad(".model", 'a model id "provider/model"');
  if (!Array.isArray(data.steps) || data.steps.length === 0)
    throw bad(".steps", "a non-empty list of messages, answers and decisions");
  const steps = data.steps.map((s, i) => checkStep(s, (m) => bad(`.steps[${i}]`, m)));
  if (steps[0]!.kind !== "send") throw bad(".steps[0]", "the first step sends a message");
  return {
    file,
    agentId,
    name: data.name,
    model:
      (data.model as string | undefined) ??
      `script/${(data.script as string | undefined) ?? agentId}`,
    steps,
    expect: checkExpect(data.expect, (at, m) => bad(`.expect${at}`, m)),
  };
}

function checkStep(step: unknown, bad: (m: string) => Error): Step {
  if (typeof step === "string") return { kind: "send", text: step };
  if (!isObject(step))
    throw bad("a message (string), { send }, { answer }, { approve: true } or { deny: true }");
  if (typeof step.send === "string") return { kind: "send", text: step.send };
  if (typeof step.answer === "string")
    return {
      kind: "answer",
      text: step.answer,
      ...(typeof step.value === "string" ? { value: step.value } : {}),
    };
  if (step.approve === true) return { kind: "decide", decision: "approved" };
  if (step.deny === true) return { kind: "decide", decision: "denied" };
  throw bad("a message (string), { send }, { answer }, { approve: true } or { deny: true }");
}

function checkExpect(data: unknown, bad: (at: string, m: string) => Error): ScenarioSpec["expect"] {
  const out: ScenarioSpec["expect"] = {
    status: "completed",
    events: [],
    toolCalls: [],
    notCalled: [],
  };
  if (data === undefined) return out;
  if (!isObject(data))
    throw bad("", "an object { status?, events?, toolCalls?, notCalled?, result?, text? }");
  const known = new Set(["status", "events", "toolCalls", "notCalled", "result", "text"]);
  for (const key of Object.keys(data))
    if (!known.has(key)) throw bad(`.${key}`, `unknown field (fields: ${[...known].join(", ")})`);
  if (data.status !== undefined) {
    if (data.status !== "completed" && data.status !== "failed" && data.status !== "cancelled")
      throw bad(".status", 'one of "completed", "failed", "cancelled"');
    out.status = data.status;
  }
  out.events = list(data.events, ".events", bad).map((e, i) => {
    if (typeof e === "string") return { type: e };
    if (isObject(e) && typeof e.type === "string" && (e.data === undefined || isObject(e.data)))
      return { type: e.type, ...(e.data ? { data: e.data } : {}) };
    throw bad(`.events[${i}]`, 'an event type ("tool.completed") or { type, data? }');
  });
  out.toolCalls = list(data.toolCalls, ".toolCalls", bad).map((c, i) => {
    if (typeof c === "string") return { name: c };
    if (isObject(c) && typeof c.name === "string" && (c.input === undefined || isObject(c.input)))
      return { name: c.name, ...(c.input ? { input: c.input } : {}) };
    throw bad(`.toolCalls[${i}]`, "a tool name or { name, input? }");
  });
  out.notCalled = list(data.notCalled, ".notCalled", bad).map((n, i) => {
    if (typeof n === "string") return n;
    throw bad(`.notCalled[${i}]`, "a tool name");
  });
  if ("result" in data) out.result = data.result;
  if (data.text !== undefined) out.text = checkText(data.text, (m) => bad(".text", m));
  return out;
}

function list(value: unknown, at: string, bad: (at: string, m: string) => Error): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw bad(at, "a list");
  return value;
}

function checkText(text: unknown, bad: (m: string) => Error): TextCheck {
  const shape =
    "{ equals }, { contains } or { score, threshold } (a scoring function: .test.ts only)";
  if (!isObject(text)) throw bad(shape);
  if (typeof text.equals === "string") return { equals: text.equals };
  if (typeof text.contains === "string") return { contains: [text.contains] };
  if (Array.isArray(text.contains) && text.contains.every((c) => typeof c === "string"))
    return { contains: text.contains as string[] };
  if (text.score !== undefined) {
    const ref = isObject(text.score) ? text.score.$score : undefined;
    if (typeof ref !== "number")
      throw bad("score must be a function; JSON test files cannot score");
    const threshold = text.threshold;
    if (typeof threshold !== "number" || threshold < 0 || threshold > 1)
      throw bad("threshold is a number from 0 to 1");
    return { score: ref, threshold };
  }
  throw bad(shape);
}
