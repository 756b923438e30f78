// What the turn loop puts in its spans (ports/tracing.ts): a tool call's span around its
// execution, and a model call's usage as GenAI attributes. Tool inputs, outputs and error
// messages can hold a user's content, so they go in only when the operator opted in.

import type { ToolCallRecord } from "../ports/records.ts";
import { NO_SPAN, type SpanAttributes } from "../ports/tracing.ts";
import type { StepOutput } from "./model-stream.ts";
import type { TurnScope } from "./turn-scope.ts";

/** Runs one tool call inside an `execute_tool` span of the current step. */
export async function traceCall<T>(
  scope: TurnScope,
  call: ToolCallRecord,
  run: () => Promise<T>,
): Promise<T> {
  const content = scope.ctx.tracing.recordContent;
  const span = (scope.stepSpan ?? NO_SPAN).child(`execute_tool ${call.tool}`, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.tool,
    "gen_ai.tool.call.id": call.callId,
    "gen_ai.tool.type": "function",
    ...(content ? { "gen_ai.tool.call.arguments": JSON.stringify(call.input) } : {}),
  });
  try {
    const value = await run();
    const settled = scope.conversation.calls.get(call.callId);
    if (settled?.status === "failed") {
      span.fail("tool_failed", content ? (settled.error ?? "failed") : "The tool call failed");
    } else if (content && settled?.status === "completed") {
      span.setAttributes({ "gen_ai.tool.call.result": JSON.stringify(settled.output) });
    }
    return value;
  } catch (error) {
    span.fail("runtime_failed", "The runtime failed while running the tool call");
    throw error;
  } finally {
    span.end();
  }
}

/** A model step's usage and finish reason, as the GenAI conventions name them. */
export function usageAttributes(response: StepOutput): SpanAttributes {
  const finish = response.finishReason?.unified;
  return {
    "gen_ai.usage.input_tokens": response.usage.inputTokens.total,
    "gen_ai.usage.output_tokens": response.usage.outputTokens.total,
    "gen_ai.usage.cache_read.input_tokens": response.usage.inputTokens.cacheRead,
    "gen_ai.usage.cache_creation.input_tokens": response.usage.inputTokens.cacheWrite,
    ...(finish ? { "gen_ai.response.finish_reasons": [finish] } : {}),
  };
}
