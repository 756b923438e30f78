import type {
  LanguageModelV3,
  LanguageModelV3FunctionTool,
  LanguageModelV3ProviderTool,
} from "@ai-sdk/provider";
import { type JsonValue, OpenComputerError } from "@opencomputer/agent";
import { RenderError, subagentToolName } from "@opencomputer/agent/internal";
import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import {
  type AgentHandle,
  type RenderedAgent,
  type ToolDescriptor,
  WorkerLostError,
} from "../ports/agent-execution.ts";
import type { LoadedAgent } from "../ports/agent-resolver.ts";
import {
  type BuiltInTool,
  BuiltInUnavailableError,
  providerToolsForStep,
} from "../ports/built-in-tool.ts";
import { ModelError, toModelError } from "../ports/model-error.ts";
import { providerToolsOf } from "../ports/provider-tools.ts";
import type { MessageRecord, ToolCallRecord, TurnError } from "../ports/records.ts";
import type { NewEvent, WriteOp } from "../ports/store.ts";
import { NO_SPAN, type SpanHandle } from "../ports/tracing.ts";
import { ASK_ID, ASK_MODEL_TOOL, endWithQuestion, takeAsk } from "./ask.ts";
import { executeBuiltInCall, providerExecutedParts } from "./built-in-call.ts";
import {
  capabilityCall,
  loadResources,
  type RenderCapabilities,
  renderCapabilities,
} from "./capabilities.ts";
import { write } from "./context.ts";
import { defaultToolsFor, withDefaultTools } from "./default-tools.ts";
import { closeTurnMcp } from "./mcp-turn.ts";
import { type Recalled, recallMemory, rememberRecall } from "./memory-recall.ts";
import { executeMemoryCall, memoryModelTool, memoryToolsOf } from "./memory-tools.ts";
import { type StepOutput, streamStep } from "./model-stream.ts";
import { isFenceRefusal } from "./refusal.ts";
import { settleTurn } from "./settle.ts";
import { absorbSteering } from "./steering.ts";
import {
  askedModel,
  explainDefault,
  renderedModelData,
  resolvedModel,
  resolveFor,
} from "./step-model.ts";
import { delegate, subagentModelTool, subagentOf } from "./subagent-call.ts";
import { executeCall } from "./tool-call.ts";
import { guard, knownState, type TurnScope, traceOf } from "./turn-scope.ts";
import { traceCall, usageAttributes } from "./turn-spans.ts";
import { usageData } from "./usage.ts";

const EMPTY_OBJECT_SCHEMA = { type: "object", properties: {} } as const;

/** Worker losses one turn survives (each resumes it); the next one fails it `runtime_lost`. */
export const MAX_WORKER_LOSSES = 3;

/**
 * The session's agent code, opened where it runs. A deployment that cannot start (its worker
 * fails to load it) fails the turn `deployment_invalid`, as a failed load does.
 */
async function openAgent(scope: TurnScope, loaded: LoadedAgent): Promise<AgentHandle | null> {
  try {
    return await scope.ctx.execution.open(loaded.agentId, loaded.deploymentId, scope.executionMode);
  } catch (error) {
    scope.ctx.log.error("deployment failed to load", {
      sessionId: scope.sessionId,
      error: String(error),
    });
    const tool = error instanceof OpenComputerError ? error.details.tool : undefined;
    await fail(scope, {
      code: "deployment_invalid",
      message:
        error instanceof OpenComputerError && error.code === "deployment_invalid"
          ? error.message
          : `Deployment ${loaded.deploymentId} failed to load`,
      ...(typeof tool === "string" ? { tool } : {}),
    });
    return null;
  }
}

/**
 * Runs a started turn to its end: render, model step, tool calls, again, until the model answers
 * without calling a tool. Returns when the turn settled here or was settled by someone else
 * (interrupt, end, a lost lease); every write is refused once the turn is no longer ours.
 */
export async function runTurn(scope: TurnScope, loaded: LoadedAgent): Promise<void> {
  scope.span = scope.ctx.tracing.turnRun({
    sessionId: scope.sessionId,
    turnId: scope.turn.id,
    ...traceOf(scope),
  });
  try {
    const agent = await openAgent(scope, loaded);
    if (!agent) return;
    scope.defaultTools = defaultToolsFor(scope, loaded);
    await loadResources(scope);
    // Only after a crash (or a lost worker) does a turn start with calls to run again.
    const pending = scope.conversation.pendingCalls();
    if (pending.length > 0) await resumePendingCalls(scope, agent, pending);
    while (!scope.signal.aborted) {
      if (!(await step(scope, agent))) return;
    }
  } catch (error) {
    if (isFenceRefusal(error) || scope.signal.aborted) return;
    if (error instanceof WorkerLostError) {
      // As if this runtime had crashed: the turn stays `running`, the session worker picks it up
      // again at once (runtime.disconnected, re-queued), and calls that had started run again
      // with the same toolCallId. A turn whose code keeps killing its worker fails instead.
      const losses = scope.ctx.workerLosses.note(scope.turn.id);
      scope.ctx.log.warn("agent worker lost during a turn", {
        sessionId: scope.sessionId,
        turnId: scope.turn.id,
        losses,
        error: error.message,
      });
      if (losses < MAX_WORKER_LOSSES) return;
      await fail(scope, {
        code: "runtime_lost",
        message: `The agent's worker process stopped ${losses} times while running this turn`,
      });
      return;
    }
    scope.ctx.log.error("turn crashed", {
      sessionId: scope.sessionId,
      turnId: scope.turn.id,
      error: String(error),
    });
    await fail(scope, {
      code: "runtime_failed",
      message: "The runtime failed while running the turn",
    });
  } finally {
    await closeTurnMcp(scope);
    scope.stepSpan?.end();
    scope.span.end();
  }
}

/** One model step and its tool calls; false when the turn is over. */
async function step(scope: TurnScope, agent: AgentHandle): Promise<boolean> {
  const { ctx, turn } = scope;
  if (turn.steps >= ctx.maxSteps) {
    await fail(scope, {
      code: "agent_failed",
      message: `The turn reached its limit of ${ctx.maxSteps} model steps without a final answer`,
    });
    return false;
  }
  if (scope.steering.pending) await absorbSteering(scope);
  scope.stepSpan?.end();
  const stepSpan = (scope.span ?? NO_SPAN).child(`step ${turn.steps + 1}`, {
    "opencomputer.step": turn.steps + 1,
  });
  scope.stepSpan = stepSpan;
  const render = await recallAndRender(scope, agent);
  if (typeof render === "string") {
    await fail(scope, { code: "agent_failed", message: render });
    return false;
  }
  const caps = await renderCapabilities(scope, render);
  if (typeof caps === "string") {
    await fail(scope, { code: "agent_failed", message: caps });
    return false;
  }
  let stepModel = askedModel(ctx, render.model);
  const renderedAt = isoNow();
  const rendered = (): NewEvent => ({
    type: "agent.rendered",
    turnId: turn.id,
    data: {
      renderId: render.renderId,
      instructions: render.instructions,
      ...renderedModelData(stepModel),
      enabledTools: enabledTools(render, caps),
      ...renderedSelections(render, caps),
      input: turn.input,
      renderedAt,
    },
  });

  let model: LanguageModelV3;
  let response: StepOutput;
  let chat: SpanHandle | undefined;
  const messageId = newId("msg");
  // agent.rendered goes first in the log: with the first streamed delta, or with the step.
  let renderedPending = true;
  const withRendered = (events: NewEvent[]): NewEvent[] => {
    if (!renderedPending) return events;
    renderedPending = false;
    return [rendered(), ...caps.events, ...events];
  };
  try {
    model = resolveFor(scope, agent, stepModel);
    stepModel = resolvedModel(stepModel, model);
    // Built-ins the model provider runs itself (web search): the model must offer them.
    const providerTools = providerToolsForStep(
      render.builtInTools,
      scope.builtInToolIds,
      ctx.builtInTools,
      providerToolsOf(model),
      stepModel.effective,
    );
    if (providerTools instanceof BuiltInUnavailableError) throw providerTools;
    chat = stepSpan.child(`chat ${model.modelId}`, {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": model.provider,
      "gen_ai.request.model": model.modelId,
    });
    response = await streamStep(
      model,
      {
        prompt: scope.conversation.toPrompt(render.instructions + caps.instructions),
        tools: modelTools(scope, render, providerTools, caps),
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
    chat?.fail(
      error instanceof ModelError ? error.code : "model_unavailable",
      error instanceof ModelError ? error.message : "The model call failed",
    );
    chat?.end();
    if (scope.signal.aborted || isFenceRefusal(error)) return false;
    if (error instanceof BuiltInUnavailableError) {
      const message = `Agent ${scope.agentId}: ${error.message}`;
      await fail(scope, { code: "agent_failed", message, tool: error.tool }, withRendered([]));
      return false;
    }
    const e = explainDefault(
      stepModel,
      scope.agentId,
      error instanceof ModelError ? error : toModelError(error, stepModel.effective),
    );
    await fail(scope, { code: e.code, message: e.message, model: e.model }, withRendered([]));
    return false;
  }
  chat?.setAttributes(usageAttributes(response));
  chat?.end();
  if (scope.signal.aborted) return false;

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
  const steps = turn.steps + 1;
  const ops: WriteOp[] = [
    { type: "message.insert", message },
    { type: "turn.update", id: turn.id, patch: { steps } },
  ];
  const events: NewEvent[] = [...withRendered([]), ...provided.events];
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
    data: usageData(ctx, model, stepModel.effective, response),
  });

  // Anthropic pauses a long server-tool turn (`pause_turn`): sending the content back resumes it.
  if (calls.length === 0 && response.finishReason?.raw !== "pause_turn") {
    const settled = await settleTurn(
      ctx,
      turn,
      { status: "completed", outcome: "completed" },
      { fence: scope.fence, ops, events, known: knownState(scope), trace: traceOf(scope) },
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
  await runCalls(scope, calls, agent, render, caps);
  if (scope.question && !scope.signal.aborted) {
    await endWithQuestion(scope);
    return false;
  }
  return true;
}

/** After a crash: calls the dead runtime started are run again, with the same toolCallId. */
async function resumePendingCalls(scope: TurnScope, agent: AgentHandle, pending: ToolCallRecord[]) {
  const render = await recallAndRender(scope, agent);
  if (typeof render === "string") {
    await fail(scope, { code: "agent_failed", message: render });
    return;
  }
  const caps = await renderCapabilities(scope, render);
  if (typeof caps === "string") {
    await fail(scope, { code: "agent_failed", message: caps });
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
  await runCalls(scope, again, agent, render, caps);
}

/** Runs a step's calls concurrently; stops waiting (not the tools) when the turn is aborted. */
async function runCalls(
  scope: TurnScope,
  calls: ToolCallRecord[],
  agent: AgentHandle,
  render: RenderedAgent,
  caps: RenderCapabilities,
) {
  const byName = new Map<string, ToolDescriptor>();
  for (const tool of render.tools) byName.set(tool.name, tool);
  const builtIns = selectedBuiltIns(scope, render);
  const memoryTools = memoryToolsOf(render);
  const available = [...byName.keys(), ...builtIns.keys()];
  if (render.builtInTools.includes(ASK_ID)) available.push(ASK_ID);
  available.push(...caps.names);
  for (const id of render.subagents ?? []) available.push(subagentToolName(id));
  const all = Promise.allSettled(
    calls.map((call) =>
      traceCall(scope, call, () => {
        if (call.tool === ASK_ID && render.builtInTools.includes(ASK_ID))
          return takeAsk(scope, call);
        const capability = caps.names.length > 0 ? capabilityCall(scope, call, caps) : undefined;
        if (capability) return capability;
        const subagent = subagentOf(render.subagents, call.tool);
        if (subagent) return delegate(scope, call, subagent);
        const builtIn = builtIns.size > 0 ? builtIns.get(call.tool) : undefined;
        if (builtIn) return executeBuiltInCall(scope, call, builtIn);
        const memoryTargets = memoryTools.size > 0 ? memoryTools.get(call.tool) : undefined;
        if (memoryTargets) return executeMemoryCall(scope, call, memoryTargets);
        return executeCall(scope, call, byName.get(call.tool), available, { agent, render });
      }),
    ),
  );
  scope.inflight.add(all);
  all.finally(() => scope.inflight.delete(all));
  if (scope.signal.aborted) return;
  const outcomes = await Promise.race([all, scope.aborted]);
  for (const outcome of outcomes ?? []) {
    if (outcome.status === "rejected" && !isFenceRefusal(outcome.reason)) throw outcome.reason;
  }
}

/** Recalls the session's memory, then renders with it; a message when either fails. */
async function recallAndRender(
  scope: TurnScope,
  agent: AgentHandle,
): Promise<RenderedAgent | string> {
  const recalled = await recallMemory(scope);
  if (typeof recalled === "string") return recalled;
  const render = await renderOrFail(scope, agent, recalled);
  if (typeof render !== "string") rememberRecall(render, recalled);
  return render;
}

async function renderOrFail(
  scope: TurnScope,
  agent: AgentHandle,
  recalled: Recalled | undefined,
): Promise<RenderedAgent | string> {
  try {
    const render = await agent.render({
      input: scope.turn.input,
      builtInToolIds: scope.builtInToolIds,
      ...(recalled ? { memory: recalled.projections } : {}),
      sessionData: scope.creation.data,
    });
    return withDefaultTools(render, scope.defaultTools ?? []);
  } catch (error) {
    if (error instanceof WorkerLostError) throw error;
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
    { fence: scope.fence, events, known: knownState(scope), trace: traceOf(scope) },
  );
}

/** The tool names a render enables, its own tools first, then built-ins, MCP tools, skills. */
function enabledTools(render: RenderedAgent, caps: RenderCapabilities): string[] {
  const names: string[] = [];
  for (const tool of render.tools) names.push(tool.name);
  for (const id of render.builtInTools) names.push(id);
  if (render.memory.length > 0) for (const name of memoryToolsOf(render).keys()) names.push(name);
  for (const name of caps.names) names.push(name);
  return names;
}

/**
 * The tools a step offers the model: the agent's, the runtime's built-ins it selected, `ask`,
 * then those the provider runs. (Built with push, not spreads: spreading arrays of differing
 * element kinds here deoptimized the step function again and again while a process warms up.)
 */
function modelTools(
  scope: TurnScope,
  render: RenderedAgent,
  providerTools: readonly LanguageModelV3ProviderTool[],
  caps: RenderCapabilities,
): Array<LanguageModelV3FunctionTool | LanguageModelV3ProviderTool> {
  const tools: Array<LanguageModelV3FunctionTool | LanguageModelV3ProviderTool> = [];
  for (const tool of render.tools) tools.push(toModelTool(tool));
  if (render.builtInTools.length > 0) {
    for (const tool of selectedBuiltIns(scope, render).values()) tools.push(builtInModelTool(tool));
    if (render.builtInTools.includes(ASK_ID)) tools.push(ASK_MODEL_TOOL);
  }
  if (render.memory.length > 0) {
    for (const [name, targets] of memoryToolsOf(render)) {
      if (!render.tools.some((tool) => tool.name === name))
        tools.push(memoryModelTool(name, targets));
    }
  }
  for (const tool of caps.tools) tools.push(tool);
  for (const id of render.subagents ?? []) tools.push(subagentModelTool(id));
  for (const tool of providerTools) tools.push(tool);
  return tools;
}

/** What `agent.rendered` says a render selected besides tools, when it selected any. */
function renderedSelections(render: RenderedAgent, caps: RenderCapabilities) {
  const out: {
    enabledMcpServers?: string[];
    skills?: string[];
    enabledSubagents?: string[];
    requiredConnections?: string[];
  } = {};
  if (caps.mcpServers.length > 0) out.enabledMcpServers = caps.mcpServers;
  if (caps.skills.length > 0) out.skills = caps.skills;
  if (render.subagents?.length) out.enabledSubagents = [...render.subagents];
  if (render.connections?.length) out.requiredConnections = [...render.connections];
  return out;
}

/** The runtime-provided tools this render selected. */
function selectedBuiltIns(scope: TurnScope, render: RenderedAgent): Map<string, BuiltInTool> {
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

function toModelTool(tool: ToolDescriptor): LanguageModelV3FunctionTool {
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
