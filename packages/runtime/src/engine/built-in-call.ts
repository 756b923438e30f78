import type { LanguageModelV3Content, LanguageModelV3Source } from "@ai-sdk/provider";
import type { JsonValue } from "@opencomputer/agent";
import { assertJsonCompatible } from "@opencomputer/agent/internal";
import type { BuiltInTool } from "../ports/built-in-tool.ts";
import { summarizeWebSearch, WEB_SEARCH_ID } from "../ports/provider-tools.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { write } from "./context.ts";
import { isFenceRefusal } from "./refusal.ts";
import { commitFailure, commitSuccess } from "./tool-call.ts";
import { guard, type TurnScope } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

/** Runs a call of a runtime-provided tool; like an author's tool, every outcome is the model's. */
export async function executeBuiltInCall(
  scope: TurnScope,
  call: ToolCallRecord,
  tool: BuiltInTool,
) {
  if (typeof call.input === "string") {
    return commitFailure(
      scope,
      call,
      `The arguments for ${tool.id} are not a valid JSON object: ${call.input.slice(0, 200)}`,
    );
  }
  const invalid = checkSchema(tool.input as object, call.input, "input");
  if (invalid) return commitFailure(scope, call, `Invalid input for ${tool.id}: ${invalid}`);
  let result: Awaited<ReturnType<BuiltInTool["execute"]>>;
  try {
    result = await tool.execute({
      input: call.input as Record<string, unknown>,
      sessionId: scope.sessionId,
      turnId: scope.turn.id,
      toolCallId: call.callId,
      agentId: scope.agentId,
      signal: scope.signal,
      reportProgress: async (metadata: JsonValue) => {
        try {
          await write(scope.ctx, scope.sessionId, {
            ...guard(scope),
            ops: [],
            events: [
              {
                type: "tool.progress",
                turnId: scope.turn.id,
                data: { tool: call.tool, callId: call.callId, title: call.tool, metadata },
              },
            ],
          });
        } catch (error) {
          if (!isFenceRefusal(error)) throw error;
        }
      },
    });
  } catch (error) {
    scope.ctx.log.error("built-in tool failed", { tool: tool.id, error: String(error) });
    return commitFailure(scope, call, `${tool.id} failed inside the runtime`);
  }
  if (!result.ok) return commitFailure(scope, call, result.message);
  return commitSuccess(scope, call, assertJsonCompatible(result.output, "$"));
}

/**
 * Calls the model provider ran on its own servers during a step (e.g. web search), as message
 * content and events. The content keeps the provider's call and result exactly as reported, so
 * the next step sends them back (Anthropic pairs server_tool_use with its result, OpenAI's
 * store-less Responses API needs the web_search_call item); events get a provider-neutral
 * summary marked `providerExecuted`. No tool-call record is written: nothing is left to run.
 */
export function providerExecutedParts(
  parts: readonly LanguageModelV3Content[],
  turnId: string,
  sources: readonly LanguageModelV3Source[],
): { content: JsonValue[]; events: NewEvent[] } {
  const content: JsonValue[] = [];
  const events: NewEvent[] = [];
  const inputs = new Map<string, JsonValue>();
  for (const part of parts) {
    if (part.type === "tool-call" && part.providerExecuted) {
      const input = parseInput(part.input);
      inputs.set(part.toolCallId, input);
      content.push({
        type: "tool-call",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input,
        providerExecuted: true,
      });
      events.push({
        type: "tool.started",
        turnId,
        data: {
          tool: part.toolName,
          callId: part.toolCallId,
          title: part.toolName,
          input,
          providerExecuted: true,
        },
      });
    } else if (part.type === "tool-result") {
      const result = assertJsonCompatible(part.result, "$") as JsonValue;
      content.push({
        type: "tool-result",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        output: { type: part.isError ? "error-json" : "json", value: result },
      });
      const base = { tool: part.toolName, callId: part.toolCallId, title: part.toolName };
      if (part.isError) {
        const code = (result as { errorCode?: unknown } | null)?.errorCode;
        const message = `${part.toolName} failed at the model provider${typeof code === "string" ? `: ${code}` : ""}`;
        events.push({
          type: "tool.failed",
          turnId,
          data: { ...base, message, providerExecuted: true },
        });
        continue;
      }
      const output =
        part.toolName === WEB_SEARCH_ID
          ? (summarizeWebSearch(
              inputs.get(part.toolCallId),
              result,
              sources,
            ) as unknown as JsonValue)
          : result;
      events.push({
        type: "tool.completed",
        turnId,
        data: { ...base, output, providerExecuted: true },
      });
    }
  }
  return { content, events };
}

function parseInput(raw: string): JsonValue {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    return { raw };
  }
}
