import type { JsonValue } from "@opencomputer/agent";
import { jsonByteLength } from "@opencomputer/agent/internal";
import { isoNow } from "../clock.ts";
import type { AgentHandle, RenderedAgent, ToolDescriptor } from "../ports/agent-execution.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { proposeApproval } from "./approval-propose.ts";
import { write } from "./context.ts";
import { egressFor } from "./egress-for.ts";
import { isFenceRefusal } from "./refusal.ts";
import { commitResult } from "./result-commit.ts";
import { guard, type TurnScope } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

/** A tool's output larger than this fails the call instead of flooding the log and the prompt. */
export const TOOL_OUTPUT_LIMIT_BYTES = 1024 * 1024;

/** The agent code a call runs in, and the render whose tool it calls. */
export interface CallSite {
  agent: AgentHandle;
  render: RenderedAgent;
}

/**
 * Runs one tool call to an outcome the model sees. Nothing the tool does (throwing, returning
 * junk, reporting junk progress) escapes as anything but a failed call; the turn continues.
 */
export async function executeCall(
  scope: TurnScope,
  call: ToolCallRecord,
  tool: ToolDescriptor | undefined,
  available: string[],
  site: CallSite,
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
  if (tool.kind === "approval") return proposeApproval(scope, call, tool, site);

  // Where the code runs (this process or a worker) checks what it returns and reports:
  // a throw, bad progress or a non-JSON output arrive here as a message for the model.
  const lease = scope.ctx.egress
    ? await egressFor(scope, { callId: call.callId, phase: "run" })
    : undefined;
  // Interrupted while the call was being set up: the settlement closes it (tool.failed with
  // settledBy); its code is not started. Agent code checks again where it runs.
  if (scope.signal.aborted) return lease?.end();
  let outcome: Awaited<ReturnType<typeof site.agent.runTool>>;
  try {
    outcome = await site.agent.runTool(site.render, tool.name, {
      input: call.input as Record<string, unknown>,
      sessionId: scope.sessionId,
      messageId: call.messageId,
      toolCallId: call.callId,
      agentId: scope.agentId,
      signal: scope.signal,
      reportProgress: (metadata) => reportProgress(scope, call, metadata),
      egress: lease?.egress,
    });
  } finally {
    // Before the outcome is committed: nothing the call left running calls out after it.
    await lease?.end();
  }
  if (!outcome.ok) return fail(outcome.message);
  const data = outcome.value;
  if (tool.result) return commitResult(scope, call, tool, data);
  const bytes = jsonByteLength(data);
  if (bytes > TOOL_OUTPUT_LIMIT_BYTES) {
    return fail(
      `${tool.name} returned ${bytes} bytes of JSON; the limit is ${TOOL_OUTPUT_LIMIT_BYTES}`,
    );
  }
  return commitSuccess(scope, call, data);
}

/** Records a call's progress; a turn that is no longer this runtime's drops it. */
export async function reportProgress(scope: TurnScope, call: ToolCallRecord, metadata: JsonValue) {
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

/** Commits a call's success; `events` (e.g. `memory.saved`) are written after tool.completed. */
/** Completes a call with its output; `also` are events written with it (e.g. a delegation's). */
export async function commitSuccess(
  scope: TurnScope,
  call: ToolCallRecord,
  output: JsonValue,
  events: readonly NewEvent[] = [],
  also: NewEvent[] = [],
) {
  const done: ToolCallRecord = {
    ...call,
    status: "completed",
    output,
    settledAt: isoNow(),
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
        ...events,
        ...also,
      ],
    });
    scope.conversation.setCall(done);
  } catch (error) {
    if (!isFenceRefusal(error)) throw error;
  }
}

/** Settles a call failed; `code` says why when the runtime knows (tool.failed `code`). */
export async function commitFailure(
  scope: TurnScope,
  call: ToolCallRecord,
  message: string,
  code?: string,
  also: NewEvent[] = [],
) {
  const failed: ToolCallRecord = {
    ...call,
    status: "failed",
    error: message,
    settledAt: isoNow(),
  };
  try {
    await write(scope.ctx, scope.sessionId, {
      ...guard(scope),
      ops: [{ type: "toolCall.upsert", call: failed }],
      events: [
        {
          type: "tool.failed",
          turnId: scope.turn.id,
          data: {
            tool: call.tool,
            callId: call.callId,
            title: call.tool,
            message,
            ...(code === undefined ? {} : { code }),
          },
        },
        ...also,
      ],
    });
    scope.conversation.setCall(failed);
  } catch (error) {
    if (!isFenceRefusal(error)) throw error;
  }
}
