import { type AgentInput, type JsonValue, OpenComputerError } from "@opencomputer/agent";
import { assertJsonCompatible, jsonByteLength } from "@opencomputer/agent/internal";
import type { TurnMode } from "../ports/records.ts";
import type { SendTurnOptions } from "./runtime-api.ts";

/** Bounds on what one turn's input may carry. */
export const INPUT_LIMITS = { textChars: 100_000, payloadBytes: 256 * 1024 } as const;

const SOURCES = new Set(["user", "system", "schedule", "webhook", "channel", "subagent", "event"]);
const KEYS = new Set(["source", "text", "payload", "answer"]);
const MODES = new Set<TurnMode>(["queue", "steer", "interrupt"]);

export class InputError extends OpenComputerError {}

const fail = (path: string, message: string): never => {
  throw new InputError("invalid_input", `${path}: ${message}`, { path });
};

/**
 * Checks a turn input from a client; returns a copy with only the known fields. A string is the
 * platform docs' short form (`{"input": "Plan the workshop."}`) and means `{ text }` from a user.
 */
export function validateInput(raw: unknown): AgentInput {
  if (typeof raw === "string") {
    if (raw.trim() === "") fail("input", "is an empty string; send the user's text");
    return validateInput({ text: raw });
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    fail("input", "must be a string (the user's text) or an object {source?, text?, payload?}");
  const input = raw as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!KEYS.has(key))
      fail(`input.${key}`, `is not an input field (allowed: ${[...KEYS].join(", ")})`);
  }
  const source = input.source ?? "user";
  if (typeof source !== "string" || !SOURCES.has(source)) {
    fail("input.source", `must be one of ${[...SOURCES].join(", ")}`);
  }
  const out: AgentInput = { source: source as AgentInput["source"] };
  if (input.text !== undefined) {
    if (typeof input.text !== "string") fail("input.text", "must be a string");
    const text = input.text as string;
    if (text.length > INPUT_LIMITS.textChars) {
      fail("input.text", `is ${text.length} characters; the limit is ${INPUT_LIMITS.textChars}`);
    }
    out.text = text;
  }
  if (input.payload !== undefined) {
    try {
      out.payload = assertJsonCompatible(input.payload, "input.payload");
    } catch (error) {
      fail((error as OpenComputerError).path ?? "input.payload", (error as Error).message);
    }
    const bytes = jsonByteLength(out.payload as JsonValue);
    if (bytes > INPUT_LIMITS.payloadBytes) {
      fail("input.payload", `is ${bytes} bytes of JSON; the limit is ${INPUT_LIMITS.payloadBytes}`);
    }
  }
  if (input.answer !== undefined) {
    const a = input.answer as Record<string, unknown>;
    if (typeof a !== "object" || a === null || typeof a.questionId !== "string") {
      fail("input.answer", "must be {questionId, text?, value?}");
    }
    out.answer = { questionId: a.questionId as string };
    if (a.text !== undefined) out.answer.text = String(a.text);
    if (a.value !== undefined) out.answer.value = String(a.value);
  }
  if (out.text === undefined && out.payload === undefined && out.answer === undefined) {
    fail("input", "needs text, payload or answer");
  }
  return out;
}

/** The input with a trigger's attested provenance: its source and `schedule` / `webhook`. */
export function withOrigin(input: AgentInput, origin: SendTurnOptions["origin"]): AgentInput {
  if (origin === undefined) return input;
  if ("schedule" in origin)
    return { ...input, source: "schedule", schedule: { ...origin.schedule } };
  return { ...input, source: "webhook", webhook: { ...origin.webhook } };
}

export function validateMode(mode: unknown): TurnMode {
  if (mode === undefined) return "queue";
  if (typeof mode !== "string" || !MODES.has(mode as TurnMode)) {
    fail("mode", `must be one of ${[...MODES].join(", ")}`);
  }
  return mode as TurnMode;
}
