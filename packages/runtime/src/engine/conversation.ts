import type { LanguageModelV3Message, LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { AgentInput, JsonValue } from "@opencomputer/agent";
import type { MessageRecord, ToolCallRecord } from "../ports/records.ts";

/**
 * A session's conversation as the model sees it. Tool results are not stored as messages: they
 * are derived from the tool-call records, so a call's outcome is written once (with its event)
 * and the prompt can never disagree with the event log.
 */
export class Conversation {
  readonly messages: MessageRecord[] = [];
  readonly calls = new Map<string, ToolCallRecord>();

  static from(messages: MessageRecord[], calls: ToolCallRecord[]): Conversation {
    const c = new Conversation();
    c.messages.push(...messages);
    for (const call of calls) c.calls.set(call.callId, call);
    return c;
  }

  addMessage(message: MessageRecord): void {
    this.messages.push(message);
  }

  setCall(call: ToolCallRecord): void {
    this.calls.set(call.callId, call);
  }

  hasTurnMessage(turnId: string): boolean {
    return this.messages.some((m) => m.turnId === turnId && m.role === "user");
  }

  /** Tool calls of the last assistant message that have no outcome yet. */
  pendingCalls(): ToolCallRecord[] {
    const last = this.messages[this.messages.length - 1];
    if (last?.role !== "assistant") return [];
    const pending: ToolCallRecord[] = [];
    for (const part of last.content as Array<{ type: string; toolCallId?: string }>) {
      if (part.type !== "tool-call" || !part.toolCallId) continue;
      const call = this.calls.get(part.toolCallId);
      if (call && call.status === "started") pending.push(call);
    }
    return pending;
  }

  toPrompt(instructions: string): LanguageModelV3Prompt {
    const prompt: LanguageModelV3Prompt = [{ role: "system", content: instructions }];
    for (const message of this.messages) {
      if (message.role === "user") {
        prompt.push({ role: "user", content: message.content as never });
        continue;
      }
      prompt.push({
        role: "assistant",
        content: message.content as never,
      } as LanguageModelV3Message);
      const results: Array<Extract<LanguageModelV3Message, { role: "tool" }>["content"][number]> =
        [];
      for (const part of message.content as Array<{
        type: string;
        toolCallId: string;
        toolName: string;
        providerExecuted?: boolean;
      }>) {
        // A provider-executed call (web search) carries its result in the assistant message.
        if (part.type !== "tool-call" || part.providerExecuted) continue;
        const call = this.calls.get(part.toolCallId);
        results.push({
          type: "tool-result",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: toolOutput(call),
        });
      }
      if (results.length > 0) prompt.push({ role: "tool", content: results });
    }
    return prompt;
  }
}

function toolOutput(call: ToolCallRecord | undefined) {
  if (!call || call.status === "started") {
    return { type: "error-text" as const, value: "The tool call did not finish." };
  }
  if (call.status === "failed")
    return { type: "error-text" as const, value: call.error ?? "The tool call failed." };
  return { type: "json" as const, value: (call.output ?? null) as JsonValue & {} };
}

/** The user message content for a turn's input: text, payload, an answer and steering. */
export function inputToContent(input: AgentInput): JsonValue {
  const parts: string[] = [];
  if (input.answer) {
    const answer = input.answer.value ?? input.answer.text ?? "";
    parts.push(`Answer to question ${input.answer.questionId}: ${answer}`);
  }
  if (input.text !== undefined) parts.push(input.text);
  if (input.payload !== undefined) parts.push(`Payload: ${JSON.stringify(input.payload)}`);
  for (const s of input.steering ?? []) {
    if (s.text !== undefined) parts.push(s.text);
    if (s.payload !== undefined) parts.push(`Payload: ${JSON.stringify(s.payload)}`);
  }
  return [{ type: "text", text: parts.join("\n\n") || "(empty input)" }];
}
