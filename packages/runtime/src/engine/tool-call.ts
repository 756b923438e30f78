import {
  assertJsonCompatible,
  type JsonValue,
  jsonByteLength,
  type Tool,
} from "@opencomputer/agent";
import type { ToolCallRecord } from "../store/records.ts";
import { proposeApproval } from "./approval-propose.ts";
import { write } from "./context.ts";
import { isFenceRefusal } from "./refusal.ts";
import { commitResult } from "./result-commit.ts";
import { guard, type TurnScope } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

/** A tool's output larger than this fails the call instead of flooding the log and the prompt. */
export const TOOL_OUTPUT_LIMIT_BYTES = 1024 * 1024;

/**
 * Runs one tool call to an outcome the model sees. Nothing the tool does (throwing, returning
 * junk, reporting junk progress) escapes as anything but a failed call; the turn continues.
 */
export async function executeCall(
  scope: TurnScope,
  call: ToolCallRecord,
  tool: Tool | undefined,
  available: string[],
) {
  const fail = (message: string) => commitFailure(scope, call, message);
  if (!tool) {
    return fail(`Unknown tool "${call.tool}". Available tools: ${available.join(", ") || "none"}`);
  }
  if (typeof call.input === "string") {
    return fail(`The arguments for ${tool.name} are not valid JSON: ${call.input.slice(0, 200)}`);
  }
  const invalid = tool.input ? checkSchema(tool.input, call.input, "input") : null;
  if (invalid) return fail(`Invalid input for ${tool.name}: ${invalid}`);
  if (tool.kind === "approval") return proposeApproval(scope, call, tool);

  let progressError: string | null = null;
  const input = call.input as Record<string, unknown>;
  let output: unknown;
  try {
    output = await tool.run({
      input,
      sessionId: scope.sessionId,
      messageId: call.messageId,
      toolCallId: call.callId,
      agentId: scope.agentId,
      signal: scope.signal,
      reportProgress: async (metadata: unknown) => {
        let value: JsonValue;
        try {
          value = assertJsonCompatible(metadata, "$");
        } catch (error) {
          progressError = `${tool.name} reported progress that is not JSON-compatible: ${(error as Error).message}`;
          throw error;
        }
        await progress(scope, call, value);
      },
    });
  } catch (error) {
    return fail(progressError ?? messageOf(error));
  }
  if (progressError) return fail(progressError);
  let data: JsonValue;
  try {
    data = assertJsonCompatible(output === undefined ? null : output, "$");
  } catch (error) {
    return fail(
      `${tool.name} returned a value that is not JSON-compatible: ${(error as Error).message}`,
    );
  }
  if (tool.result) return commitResult(scope, call, tool, data);
  const bytes = jsonByteLength(data);
  if (bytes > TOOL_OUTPUT_LIMIT_BYTES) {
    return fail(
      `${tool.name} returned ${bytes} bytes of JSON; the limit is ${TOOL_OUTPUT_LIMIT_BYTES}`,
    );
  }
  return commitSuccess(scope, call, data);
}

async function progress(scope: TurnScope, call: ToolCallRecord, metadata: JsonValue) {
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
}

export async function commitSuccess(scope: TurnScope, call: ToolCallRecord, output: JsonValue) {
  const done: ToolCallRecord = {
    ...call,
    status: "completed",
    output,
    settledAt: new Date().toISOString(),
  };
  try {
    await write(scope.ctx, scope.sessionId, {
      ...guard(scope),
      ops: [{ type: "toolCall.upsert", call: done }],
      events: [
        {
          type: "tool.completed",
          turnId: scope.turn.id,
          data: { tool: call.tool, callId: call.callId, title: call.tool, output },
        },
      ],
    });
    scope.conversation.setCall(done);
  } catch (error) {
    if (!isFenceRefusal(error)) throw error;
  }
}

export async function commitFailure(scope: TurnScope, call: ToolCallRecord, message: string) {
  const failed: ToolCallRecord = {
    ...call,
    status: "failed",
    error: message,
    settledAt: new Date().toISOString(),
  };
  try {
    await write(scope.ctx, scope.sessionId, {
      ...guard(scope),
      ops: [{ type: "toolCall.upsert", call: failed }],
      events: [
        {
          type: "tool.failed",
          turnId: scope.turn.id,
          data: { tool: call.tool, callId: call.callId, title: call.tool, message },
        },
      ],
    });
    scope.conversation.setCall(failed);
  } catch (error) {
    if (!isFenceRefusal(error)) throw error;
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string"
    ? error
    : `The tool threw ${JSON.stringify(error) ?? String(error)}`;
}
