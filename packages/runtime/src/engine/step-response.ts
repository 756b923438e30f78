// Reading one model step's answer into the assistant message and the calls we run.

import type { JsonValue } from "@opencomputer/agent";
import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import type { MessageRecord, ToolCallRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { providerExecutedParts } from "./built-in-call.ts";
import type { StepOutput } from "./model-stream.ts";
import type { TurnScope } from "./turn-scope.ts";

export interface StepAnswer {
  message: MessageRecord;
  calls: ToolCallRecord[];
  text: string;
  reasoning: string;
  /** Events for what the provider ran itself in the step (web searches). */
  providerEvents: NewEvent[];
}

/** The step's text, reasoning and tool calls; each call we run gets a fresh call id. */
export function readStepAnswer(
  scope: TurnScope,
  response: StepOutput,
  messageId: string,
): StepAnswer {
  const { turn } = scope;
  const now = isoNow();
  const content: JsonValue[] = [];
  const callParts: JsonValue[] = [];
  const calls: ToolCallRecord[] = [];
  let text = "";
  let reasoning = "";
  for (const part of response.content) {
    if (part.type === "reasoning") {
      reasoning += part.text;
    } else if (part.type === "text") {
      text += part.text;
      content.push({ type: "text", text: part.text });
    } else if (part.type === "tool-call" && !part.providerExecuted) {
      const callId = newId("call");
      const input = parseArguments(part.input);
      callParts.push({
        type: "tool-call",
        toolCallId: callId,
        toolName: part.toolName,
        input: typeof input === "string" ? {} : input,
      });
      calls.push({
        sessionId: scope.sessionId,
        callId,
        turnId: turn.id,
        messageId,
        tool: part.toolName,
        input,
        status: "started",
        output: null,
        error: null,
        attempts: 1,
        startedAt: now,
        settledAt: null,
      });
    }
  }
  // Searches the provider ran come before the calls we run, as they happened in the step.
  const provided = providerExecutedParts(response.content, turn.id, response.sources);
  content.push(...provided.content, ...callParts);
  const message: MessageRecord = {
    id: messageId,
    sessionId: scope.sessionId,
    turnId: turn.id,
    role: "assistant",
    content,
    createdAt: now,
  };
  return { message, calls, text, reasoning, providerEvents: provided.events };
}

/** The model's arguments as an object, or the raw text when it is not a JSON object. */
function parseArguments(raw: string): JsonValue {
  if (raw.trim() === "") return {};
  try {
    const value = JSON.parse(raw) as JsonValue;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch {
    // fall through: the call fails with the raw text shown to the model
  }
  return raw;
}
