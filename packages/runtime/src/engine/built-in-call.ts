import { assertJsonCompatible, type JsonValue } from "@opencomputer/agent";
import type { ToolCallRecord } from "../store/records.ts";
import type { BuiltInTool } from "./built-in-tool.ts";
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
