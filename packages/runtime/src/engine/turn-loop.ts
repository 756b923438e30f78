import type { LanguageModelV3, LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import {
  type JsonValue,
  RenderError,
  type RenderResult,
  renderAgent,
  type Tool,
} from "@opencomputer/agent";
import type { LoadedAgent } from "../agents/resolver.ts";
import { newId } from "../ids.ts";
import { ModelError, toModelError } from "../models/model-error.ts";
import type { NewEvent, WriteOp } from "../store/port.ts";
import type { MessageRecord, ToolCallRecord, TurnError } from "../store/records.ts";
import { ASK_ID, ASK_MODEL_TOOL, endWithQuestion, takeAsk } from "./ask.ts";
import { executeBuiltInCall } from "./built-in-call.ts";
import type { BuiltInTool } from "./built-in-tool.ts";
import { write } from "./context.ts";
import { type StepOutput, streamStep } from "./model-stream.ts";
import { isFenceRefusal } from "./refusal.ts";
import { settleTurn } from "./settle.ts";
import { absorbSteering } from "./steering.ts";
import { executeCall } from "./tool-call.ts";
import { guard, type TurnScope } from "./turn-scope.ts";

const EMPTY_OBJECT_SCHEMA = { type: "object", properties: {} } as const;

/**
 * Runs a started turn to its end: render, model step, tool calls, again, until the model answers
 * without calling a tool. Returns when the turn settled here or was settled by someone else
 * (interrupt, end, a lost lease); every write is refused once the turn is no longer ours.
 */
export async function runTurn(scope: TurnScope, agent: LoadedAgent): Promise<void> {
  try {
    await resumePendingCalls(scope, agent);
    while (!scope.signal.aborted) {
      if (!(await step(scope, agent))) return;
    }
  } catch (error) {
    if (isFenceRefusal(error) || scope.signal.aborted) return;
    scope.ctx.log.error("turn crashed", {
      sessionId: scope.sessionId,
      turnId: scope.turn.id,
      error: String(error),
    });
    await fail(scope, {
      code: "runtime_failed",
      message: "The runtime failed while running the turn",
    });
  }
}

/** One model step and its tool calls; false when the turn is over. */
async function step(scope: TurnScope, agent: LoadedAgent): Promise<boolean> {
  const { ctx, turn } = scope;
  if (turn.steps >= ctx.maxSteps) {
    await fail(scope, {
      code: "agent_failed",
      message: `The turn reached its limit of ${ctx.maxSteps} model steps without a final answer`,
    });
    return false;
  }
  if (scope.steering.pending) await absorbSteering(scope);
  const render = renderOrFail(scope, agent);
  if (typeof render === "string") {
    await fail(scope, { code: "agent_failed", message: render });
    return false;
  }
  const renderedEvent: NewEvent = {
    type: "agent.rendered",
    turnId: turn.id,
    data: {
      renderId: newId("rnd"),
      instructions: render.instructions,
      model: render.model ?? null,
      enabledTools: [...render.tools.map((t) => t.name), ...render.builtInTools],
      input: turn.input as unknown as JsonValue,
      renderedAt: new Date().toISOString(),
    },
  };

  let model: LanguageModelV3;
  let response: StepOutput;
  const requested = render.model ?? "";
  const messageId = newId("msg");
  // agent.rendered goes first in the log: with the first streamed delta, or with the step.
  let renderedPending = true;
  const withRendered = (events: NewEvent[]): NewEvent[] => {
    if (!renderedPending) return events;
    renderedPending = false;
    return [renderedEvent, ...events];
  };
  try {
    model = ctx.models.resolve(requested, { projectDir: agent.projectDir, agentId: agent.agentId });
    response = await streamStep(
      model,
      {
        prompt: scope.conversation.toPrompt(render.instructions),
        tools: [
          ...render.tools.map(toModelTool),
          ...[...selectedBuiltIns(scope, render).values()].map(builtInModelTool),
          ...(render.builtInTools.includes(ASK_ID) ? [ASK_MODEL_TOOL] : []),
        ],
        abortSignal: scope.signal,
      },
      async (kind, text) => {
        const data = kind === "message" ? { messageId, text } : { messageId, text };
        await write(ctx, scope.sessionId, {
          ...guard(scope),
          ops: [],
          events: withRendered([{ type: `${kind}.delta`, turnId: turn.id, data }]),
        });
      },
    );
  } catch (error) {
    if (scope.signal.aborted || isFenceRefusal(error)) return false;
    const e = error instanceof ModelError ? error : toModelError(error, requested);
    await fail(scope, { code: e.code, message: e.message, model: e.model }, withRendered([]));
    return false;
  }
  if (scope.signal.aborted) return false;

  const now = new Date().toISOString();
  const content: JsonValue[] = [];
  const calls: ToolCallRecord[] = [];
  let text = "";
  let reasoning = "";
  for (const part of response.content) {
    if (part.type === "reasoning") {
      reasoning += part.text;
    } else if (part.type === "text") {
      text += part.text;
      content.push({ type: "text", text: part.text });
    } else if (part.type === "tool-call") {
      const callId = newId("call");
      const input = parseArguments(part.input);
      content.push({
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
  const message: MessageRecord = {
    id: messageId,
    sessionId: scope.sessionId,
    turnId: turn.id,
    role: "assistant",
    content,
    createdAt: now,
  };
  const steps = turn.steps + 1;
  const ops: WriteOp[] = [
    { type: "message.insert", message },
    { type: "turn.update", id: turn.id, patch: { steps } },
  ];
  const events: NewEvent[] = withRendered([]);
  if (reasoning) {
    events.push({
      type: "reasoning.completed",
      turnId: turn.id,
      data: { messageId, text: reasoning },
    });
  }
  if (text) events.push({ type: "message.completed", turnId: turn.id, data: { messageId, text } });
  events.push({
    type: "usage.recorded",
    turnId: turn.id,
    data: {
      provider: model.provider,
      model: model.modelId,
      inputTokens: response.usage.inputTokens.total ?? 0,
      outputTokens: response.usage.outputTokens.total ?? 0,
    },
  });

  if (calls.length === 0) {
    const settled = await settleTurn(
      ctx,
      turn,
      { status: "completed", outcome: "completed" },
      { fence: scope.fence, ops, events },
    );
    if (settled) scope.conversation.addMessage(message);
    return false;
  }
  for (const call of calls) {
    ops.push({ type: "toolCall.upsert", call });
    events.push({
      type: "tool.started",
      turnId: turn.id,
      data: { tool: call.tool, callId: call.callId, title: call.tool, input: call.input },
    });
  }
  await write(ctx, scope.sessionId, { ...guard(scope), ops, events });
  turn.steps = steps;
  scope.conversation.addMessage(message);
  for (const call of calls) scope.conversation.setCall(call);
  await runCalls(scope, calls, render);
  if (scope.question && !scope.signal.aborted) {
    await endWithQuestion(scope);
    return false;
  }
  return true;
}

/** After a crash: calls the dead runtime started are run again, with the same toolCallId. */
async function resumePendingCalls(scope: TurnScope, agent: LoadedAgent) {
  const pending = scope.conversation.pendingCalls();
  if (pending.length === 0) return;
  const render = renderOrFail(scope, agent);
  if (typeof render === "string") {
    await fail(scope, { code: "agent_failed", message: render });
    return;
  }
  const again = pending.map((call) => ({ ...call, attempts: call.attempts + 1 }));
  await write(scope.ctx, scope.sessionId, {
    ...guard(scope),
    ops: again.map((call) => ({ type: "toolCall.upsert" as const, call })),
    events: again.map((call) => ({
      type: "tool.started",
      turnId: scope.turn.id,
      data: {
        tool: call.tool,
        callId: call.callId,
        title: call.tool,
        input: call.input,
        attempt: call.attempts,
      },
    })),
  });
  for (const call of again) scope.conversation.setCall(call);
  await runCalls(scope, again, render);
}

/** Runs a step's calls concurrently; stops waiting (not the tools) when the turn is aborted. */
async function runCalls(scope: TurnScope, calls: ToolCallRecord[], render: RenderResult) {
  const byName = new Map<string, Tool>(render.tools.map((t) => [t.name, t]));
  const builtIns = selectedBuiltIns(scope, render);
  const available = [...byName.keys(), ...builtIns.keys()];
  if (render.builtInTools.includes(ASK_ID)) available.push(ASK_ID);
  const all = Promise.allSettled(
    calls.map((call) => {
      if (call.tool === ASK_ID && render.builtInTools.includes(ASK_ID)) return takeAsk(scope, call);
      const builtIn = builtIns.get(call.tool);
      if (builtIn) return executeBuiltInCall(scope, call, builtIn);
      return executeCall(scope, call, byName.get(call.tool), available);
    }),
  );
  scope.inflight.add(all);
  all.finally(() => scope.inflight.delete(all));
  if (scope.signal.aborted) return;
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    scope.signal.addEventListener("abort", onAbort, { once: true });
  });
  const outcomes = await Promise.race([all, aborted]);
  scope.signal.removeEventListener("abort", onAbort);
  for (const outcome of outcomes ?? []) {
    if (outcome.status === "rejected" && !isFenceRefusal(outcome.reason)) throw outcome.reason;
  }
}

function renderOrFail(scope: TurnScope, agent: LoadedAgent): RenderResult | string {
  try {
    return renderAgent(agent.render, {
      input: scope.turn.input,
      builtInToolIds: scope.builtInToolIds,
    });
  } catch (error) {
    // The author's error may hold anything; it goes to the runtime's log, not to clients.
    scope.ctx.log.error("agent render failed", {
      sessionId: scope.sessionId,
      turnId: scope.turn.id,
      agentId: scope.agentId,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    if (error instanceof RenderError) {
      // A platform rule the agent broke: its message is ours, and it tells the author what to fix.
      if (
        error.code === "tool_unknown_builtin" &&
        !scope.builtInToolIds.includes(ASK_ID) &&
        /"ask"/.test(error.message)
      ) {
        return `Agent ${scope.agentId}: sessions with executionMode "microvm" cannot select ask`;
      }
      return `Agent ${scope.agentId} failed to render: ${error.message}`;
    }
    return `Agent ${scope.agentId} failed to render`;
  }
}

async function fail(scope: TurnScope, error: TurnError, events: NewEvent[] = []) {
  await settleTurn(
    scope.ctx,
    scope.turn,
    { status: "failed", error },
    { fence: scope.fence, events },
  );
}

/** The runtime-provided tools this render selected. */
function selectedBuiltIns(scope: TurnScope, render: RenderResult): Map<string, BuiltInTool> {
  const selected = new Map<string, BuiltInTool>();
  for (const id of render.builtInTools) {
    const tool = scope.ctx.builtInTools.get(id);
    if (tool) selected.set(id, tool);
  }
  return selected;
}

function builtInModelTool(tool: BuiltInTool): LanguageModelV3FunctionTool {
  return {
    type: "function",
    name: tool.id,
    description: tool.description,
    inputSchema: tool.input as LanguageModelV3FunctionTool["inputSchema"],
  };
}

function toModelTool(tool: Tool): LanguageModelV3FunctionTool {
  return {
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: (tool.input ?? EMPTY_OBJECT_SCHEMA) as LanguageModelV3FunctionTool["inputSchema"],
  };
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
