import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ModelError } from "@opencomputer/runtime";

export interface ScriptToolCall {
  name: string;
  /** Arguments as an object; `inputText` instead sends raw text (to test malformed JSON). */
  input?: Record<string, unknown>;
  inputText?: string;
}

/** A web search the scripted provider "ran" during a step (`useTool("web-search")`). */
export interface ScriptWebSearch {
  query: string;
  /** What the search found; the agent sees them as a provider's search results. */
  results?: Array<{ url: string; title?: string | null }>;
  /** A failed search instead, with the provider's error code (e.g. `max_uses_exceeded`). */
  error?: string;
}

export interface ScriptStep {
  text?: string;
  /** Searches run at the provider before the step's text and calls. */
  webSearch?: ScriptWebSearch[];
  reasoning?: string;
  toolCalls?: ScriptToolCall[];
  error?: { status: number; message: string };
  delayMs?: number;
  usage?: { inputTokens: number; outputTokens: number };
}

export interface Script {
  steps: ScriptStep[];
  /**
   * Where to continue after the last step: asked for step `steps.length + k`, the model plays
   * step `repeatFrom + k` modulo the repeated part. Without it, asking past the end fails.
   */
  repeatFrom?: number;
}

const cache = new Map<string, { mtimeMs: number; size: number; script: Script }>();

/**
 * Where `script/<name>` is read from: `opencomputer/scripts/<name>.json`, or the error to give
 * for a name that is not a plain file name (thrown when the model is asked, not when it is made).
 */
export function scriptFile(projectDir: string, name: string, modelId: string): string | ModelError {
  if (!/^[a-zA-Z0-9_.-]+$/.test(name) || name.startsWith(".")) {
    return new ModelError(
      "model_unavailable",
      `Script name "${name}" must be a plain file name`,
      modelId,
    );
  }
  return join(projectDir, "opencomputer", "scripts", `${name}.json`);
}

/** Reads `opencomputer/scripts/<name>.json` (loadScriptFile). */
export function loadScript(
  projectDir: string,
  name: string,
  modelId: string,
  recheck = true,
): Script {
  const file = scriptFile(projectDir, name, modelId);
  if (typeof file !== "string") throw file;
  return loadScriptFile(file, modelId, recheck);
}

/**
 * Reads a script file, re-reading only when the file changed. With `recheck` false a copy
 * already read is used without looking at the file again (the scripted model does so for the
 * steps that continue a turn, see script-model.ts).
 */
export function loadScriptFile(file: string, modelId: string, recheck = true): Script {
  const hit = cache.get(file);
  if (hit && !recheck) return hit.script;
  let stat: { mtimeMs: number; size: number };
  try {
    stat = statSync(file);
  } catch {
    throw new ModelError(
      "model_unavailable",
      `No script for ${modelId}: ${file} does not exist`,
      modelId,
    );
  }
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.script;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ModelError(
      "model_rejected",
      `${file} is not valid JSON: ${(error as Error).message}`,
      modelId,
    );
  }
  const script = validateScript(raw, file, modelId);
  cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, script });
  return script;
}

function validateScript(raw: unknown, file: string, modelId: string): Script {
  const fail = (path: string, what: string): never => {
    throw new ModelError("model_rejected", `${file}: ${path} ${what}`, modelId);
  };
  if (!isObject(raw) || !Array.isArray(raw.steps)) fail("steps", "must be an array");
  const steps = (raw as { steps: unknown[] }).steps;
  for (const key of Object.keys(raw as object)) {
    if (key !== "steps" && key !== "repeatFrom")
      fail(key, "is not a known field (steps, repeatFrom)");
  }
  const repeatFrom = (raw as { repeatFrom?: unknown }).repeatFrom;
  if (
    repeatFrom !== undefined &&
    !(
      Number.isInteger(repeatFrom) &&
      (repeatFrom as number) >= 0 &&
      (repeatFrom as number) < steps.length
    )
  ) {
    fail("repeatFrom", `must be a step index from 0 to ${steps.length - 1}`);
  }
  for (const [i, step] of steps.entries()) {
    const at = `steps[${i}]`;
    if (!isObject(step)) return fail(at, "must be an object");
    for (const key of Object.keys(step)) {
      if (!STEP_FIELDS.includes(key)) {
        fail(`${at}.${key}`, `is not a known step field (${STEP_FIELDS.join(", ")})`);
      }
    }
    if (step.text !== undefined && typeof step.text !== "string")
      fail(`${at}.text`, "must be a string");
    if (step.reasoning !== undefined && typeof step.reasoning !== "string")
      fail(`${at}.reasoning`, "must be a string");
    if (
      step.delayMs !== undefined &&
      !(Number.isInteger(step.delayMs) && (step.delayMs as number) >= 0)
    ) {
      fail(`${at}.delayMs`, "must be a non-negative integer");
    }
    if (step.error !== undefined) {
      const e = step.error;
      if (!isObject(e) || !Number.isInteger(e.status) || typeof e.message !== "string") {
        fail(`${at}.error`, "must be {status: integer, message: string}");
      }
    }
    if (step.webSearch !== undefined) validateWebSearch(step.webSearch, `${at}.webSearch`, fail);
    if (step.toolCalls !== undefined) {
      if (!Array.isArray(step.toolCalls)) return fail(`${at}.toolCalls`, "must be an array");
      for (const [j, call] of (step.toolCalls as unknown[]).entries()) {
        const cat = `${at}.toolCalls[${j}]`;
        if (!isObject(call) || typeof call.name !== "string")
          return fail(`${cat}.name`, "must be a string");
        if (call.input !== undefined && !isObject(call.input))
          fail(`${cat}.input`, "must be an object");
        if (call.inputText !== undefined && typeof call.inputText !== "string") {
          fail(`${cat}.inputText`, "must be a string");
        }
      }
    }
  }
  return raw as unknown as Script;
}

/** The step played as the `index`-th (0-based) model call of a conversation, if any. */
export function scriptStep(script: Script, index: number): ScriptStep | undefined {
  const { steps, repeatFrom } = script;
  if (index < steps.length || repeatFrom === undefined) return steps[index];
  return steps[repeatFrom + ((index - steps.length) % (steps.length - repeatFrom))];
}

const STEP_FIELDS = ["text", "reasoning", "webSearch", "toolCalls", "error", "delayMs", "usage"];

function validateWebSearch(
  value: unknown,
  at: string,
  fail: (path: string, what: string) => never,
): void {
  if (!Array.isArray(value)) fail(at, "must be an array of {query, results?, error?}");
  for (const [i, search] of (value as unknown[]).entries()) {
    const sat = `${at}[${i}]`;
    if (!isObject(search) || typeof search.query !== "string")
      fail(`${sat}.query`, "must be a string");
    const { results, error } = search as Record<string, unknown>;
    if (error !== undefined && typeof error !== "string") fail(`${sat}.error`, "must be a string");
    if (results === undefined) continue;
    if (!Array.isArray(results)) fail(`${sat}.results`, "must be an array of {url, title?}");
    for (const [j, result] of (results as unknown[]).entries()) {
      const rat = `${sat}.results[${j}]`;
      if (!isObject(result) || typeof result.url !== "string")
        fail(`${rat}.url`, "must be a string");
      const title = (result as Record<string, unknown>).title;
      if (title !== undefined && title !== null && typeof title !== "string") {
        fail(`${rat}.title`, "must be a string or null");
      }
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
