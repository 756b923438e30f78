import type { JsonValue } from "@opencomputer/agent";
import type { Budget } from "@opencomputer/protocol";
import type { ExecutionMode, SessionSource } from "../ports/records.ts";
import { validateBudget } from "./budget.ts";
import { InputError } from "./input.ts";
import { validateSessionData } from "./session-data.ts";

export interface CreateSessionOptions {
  /** `<agentId>@<alias>`; a bare id means production. */
  agentId: string;
  environment?: string;
  source?: SessionSource;
  labels?: Record<string, string>;
  executionMode?: ExecutionMode;
  idempotencyKey?: string;
  /** The project the session belongs to (default `default`); see docs/api.md "Projects". */
  projectId?: string;
  /** Memory bindings, `{ <resource>: { scope, id?, access? } }` (docs/memory.md). */
  memory?: unknown;
  /** Session data the agent reads with `useSessionData(key)`: a JSON object, at most 64 KiB. */
  data?: Record<string, JsonValue>;
  /** What the session may spend, `{maxCostUsd?, maxTokens?}` (budget.ts, docs/usage.md). */
  budget?: Budget;
}

/** Project ids: what `opencomputer keys create --project` accepts. */
export const PROJECT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const SOURCES: readonly SessionSource[] = ["api", "playground", "webhook", "schedule"];
const MODES: readonly ExecutionMode[] = ["default", "microvm"];
const LABEL_KEY = /^[a-z][a-z0-9_.-]{0,63}$/;
export const LABEL_LIMITS = { keys: 16, valueChars: 256, totalBytes: 4096 } as const;

const fail = (path: string, message: string): never => {
  throw new InputError("invalid_input", `${path}: ${message}`, { path });
};

export function validateLabels(labels: unknown, path = "labels"): Record<string, string> {
  if (typeof labels !== "object" || labels === null || Array.isArray(labels))
    return fail(path, "must be an object");
  const entries = Object.entries(labels);
  if (entries.length > LABEL_LIMITS.keys)
    fail(path, `has ${entries.length} keys; at most ${LABEL_LIMITS.keys}`);
  for (const [k, v] of entries) {
    if (!LABEL_KEY.test(k)) fail(`${path}.${k}`, `key must match ${LABEL_KEY}`);
    if (typeof v !== "string") fail(`${path}.${k}`, "must be a string");
    if ((v as string).length > LABEL_LIMITS.valueChars)
      fail(`${path}.${k}`, `is longer than ${LABEL_LIMITS.valueChars} characters`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(labels));
  if (bytes > LABEL_LIMITS.totalBytes)
    fail(path, `is ${bytes} bytes; at most ${LABEL_LIMITS.totalBytes}`);
  return { ...(labels as Record<string, string>) };
}

export function validateCreateOptions(raw: CreateSessionOptions): Required<
  Omit<CreateSessionOptions, "idempotencyKey" | "memory" | "budget">
> & {
  idempotencyKey?: string;
  budget?: Budget;
} {
  if (typeof raw !== "object" || raw === null) fail("options", "must be an object");
  if (typeof raw.agentId !== "string" || raw.agentId === "")
    fail("agentId", "must be a non-empty string");
  const source = raw.source ?? "api";
  if (!SOURCES.includes(source)) fail("source", `must be one of ${SOURCES.join(", ")}`);
  const executionMode = raw.executionMode ?? "default";
  if (!MODES.includes(executionMode)) fail("executionMode", `must be one of ${MODES.join(", ")}`);
  const environment = raw.environment ?? "development";
  if (environment !== "development" && environment !== "production")
    fail("environment", "must be development or production");
  const projectId = raw.projectId ?? "default";
  if (typeof projectId !== "string" || !PROJECT_ID.test(projectId))
    fail("projectId", `must match ${PROJECT_ID}`);
  if (
    raw.idempotencyKey !== undefined &&
    (typeof raw.idempotencyKey !== "string" ||
      raw.idempotencyKey.length === 0 ||
      raw.idempotencyKey.length > 256)
  ) {
    fail("idempotencyKey", "must be 1 to 256 characters");
  }
  return {
    agentId: raw.agentId,
    projectId,
    environment,
    source,
    labels: validateLabels(raw.labels ?? {}),
    executionMode,
    data: validateSessionData(raw.data ?? {}),
    ...optionalBudget(raw.budget),
    ...(raw.idempotencyKey ? { idempotencyKey: raw.idempotencyKey } : {}),
  };
}

/** The labels after `{set, unset}`: unknown fields, a key both set and unset, or a result over the limits are refused. */
export function applyLabelChange(
  current: Record<string, string>,
  change: { set?: Record<string, string>; unset?: string[] },
): Record<string, string> {
  if (typeof change !== "object" || change === null)
    return fail("labels", "must be {set?, unset?}");
  for (const key of Object.keys(change)) {
    if (key !== "set" && key !== "unset")
      fail(key, "is not a field of a label change (set, unset)");
  }
  const set = validateLabels(change.set ?? {}, "set");
  const unset = change.unset ?? [];
  if (!Array.isArray(unset) || unset.some((k) => typeof k !== "string"))
    fail("unset", "must be an array of keys");
  for (const key of unset) if (key in set) fail(`unset`, `${key} is both set and unset`);
  const next: Record<string, string> = { ...current, ...set };
  for (const key of unset) delete next[key];
  return validateLabels(next, "labels");
}

function optionalBudget(raw: unknown): { budget?: Budget } {
  const budget = validateBudget(raw);
  return budget ? { budget } : {};
}
