// The turn loop: render, call the model, run its tool calls, again, until the model answers.

import { OpenComputerError } from "@opencomputer/agent";
import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import { type AgentHandle, WorkerLostError } from "../ports/agent-execution.ts";
import type { LoadedAgent } from "../ports/agent-resolver.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import type { NewEvent, WriteOp } from "../ports/store.ts";
import { NO_SPAN } from "../ports/tracing.ts";
import { endWithQuestion } from "./ask.ts";
import { noteUsage, withinBudget } from "./budget.ts";
import { loadResources, renderCapabilities } from "./capabilities.ts";
import { write } from "./context.ts";
import { defaultToolsFor } from "./default-tools.ts";
import { closeTurnMcp } from "./mcp-turn.ts";
import { isFenceRefusal } from "./refusal.ts";
import { settleTurn } from "./settle.ts";
import { absorbSteering } from "./steering.ts";
import { runCalls } from "./step-calls.ts";
import { askedModel, renderedModelData } from "./step-model.ts";
import { callModel, type StepCall } from "./step-model-call.ts";
import { readStepAnswer } from "./step-response.ts";
import { enabledTools, renderedSelections } from "./step-tools.ts";
import { failTurn, recallAndRender } from "./turn-render.ts";
import { guard, knownState, type TurnScope, traceOf } from "./turn-scope.ts";
import { usageData } from "./usage.ts";

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
    await failTurn(scope, {
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
      await failTurn(scope, {
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
    await failTurn(scope, {
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
    await failTurn(scope, {
      code: "agent_failed",
      message: `The turn reached its limit of ${ctx.maxSteps} model steps without a final answer`,
    });
    return false;
  }
  if (scope.steering.pending) await absorbSteering(scope);
  if (!(await withinBudget(scope))) return false;
  const prepared = await prepareStep(scope, agent);
  if (!prepared) return false;
  const answered = await callModel(prepared);
  if (!answered || scope.signal.aborted) return false;
  const { render, caps } = prepared;
  const { model, stepModel, response } = answered;
  const { message, calls, text, reasoning, providerEvents } = readStepAnswer(
    scope,
    response,
    prepared.messageId,
  );
  const messageId = message.id;
  const steps = turn.steps + 1;
  const ops: WriteOp[] = [
    { type: "message.insert", message },
    { type: "turn.update", id: turn.id, patch: { steps } },
  ];
  const events: NewEvent[] = [...prepared.withRendered([]), ...providerEvents];
  if (reasoning) {
    events.push({
      type: "reasoning.completed",
      turnId: turn.id,
      data: { messageId, text: reasoning },
    });
  }
  if (text) events.push({ type: "message.completed", turnId: turn.id, data: { messageId, text } });
  const usage = usageData(ctx, model, stepModel.effective, response);
  noteUsage(scope, usage);
  events.push({ type: "usage.recorded", turnId: turn.id, data: usage });

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
  // The step's calls are recorded; a spent budget settles them `tool.failed` with the turn.
  if (!(await withinBudget(scope))) return false;
  await runCalls(scope, calls, agent, render, caps);
  if (scope.question && !scope.signal.aborted) {
    await endWithQuestion(scope);
    return false;
  }
  return true;
}

/** The step's span, render and capabilities; null when the turn failed on them. */
async function prepareStep(scope: TurnScope, agent: AgentHandle): Promise<StepCall | null> {
  const { ctx, turn } = scope;
  scope.stepSpan?.end();
  const stepSpan = (scope.span ?? NO_SPAN).child(`step ${turn.steps + 1}`, {
    "opencomputer.step": turn.steps + 1,
  });
  scope.stepSpan = stepSpan;
  const render = await recallAndRender(scope, agent);
  if (typeof render === "string") {
    await failTurn(scope, { code: "agent_failed", message: render });
    return null;
  }
  const caps = await renderCapabilities(scope, render);
  if (typeof caps === "string") {
    await failTurn(scope, { code: "agent_failed", message: caps });
    return null;
  }
  const renderedAt = isoNow();
  // agent.rendered goes first in the log: with the first streamed delta, or with the step.
  let renderedPending = true;
  const call: StepCall = {
    scope,
    agent,
    render,
    caps,
    stepSpan,
    messageId: newId("msg"),
    stepModel: askedModel(ctx, render.model),
    withRendered: (events) => {
      if (!renderedPending) return events;
      renderedPending = false;
      const rendered: NewEvent = {
        type: "agent.rendered",
        turnId: turn.id,
        data: {
          renderId: render.renderId,
          instructions: render.instructions,
          ...renderedModelData(call.stepModel),
          enabledTools: enabledTools(render, caps),
          ...renderedSelections(render, caps),
          input: turn.input,
          renderedAt,
        },
      };
      return [rendered, ...caps.events, ...events];
    },
  };
  return call;
}

/** After a crash: calls the dead runtime started are run again, with the same toolCallId. */
async function resumePendingCalls(scope: TurnScope, agent: AgentHandle, pending: ToolCallRecord[]) {
  // The calls belong to the step the dead runtime ran; this process traces their new run under
  // its own span of that step, so they appear in the turn's trace (the next step ends it).
  scope.stepSpan?.end();
  scope.stepSpan = (scope.span ?? NO_SPAN).child(`step ${scope.turn.steps} resumed`, {
    "opencomputer.step": scope.turn.steps,
    "opencomputer.step.resumed": true,
  });
  const render = await recallAndRender(scope, agent);
  if (typeof render === "string") {
    await failTurn(scope, { code: "agent_failed", message: render });
    return;
  }
  const caps = await renderCapabilities(scope, render);
  if (typeof caps === "string") {
    await failTurn(scope, { code: "agent_failed", message: caps });
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
