// A delegation call: the parent's model called `subagent_<agentId>`. The call creates (or, run
// again after a crash, finds) the child session its id derives from, sends it the task once
// (the same idempotency key every time), and waits for the child to answer; a question or an
// approval the child waits for is told to the parent's watchers and the call keeps waiting.
// The call completes with the child's answer or fails with why it has none.

import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { type AgentInput, type JsonValue, OpenComputerError } from "@opencomputer/agent";
import { subagentToolName } from "@opencomputer/agent/internal";
import type { ToolCallRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { write } from "./context.ts";
import { isFenceRefusal } from "./refusal.ts";
import { nextChange, type SubagentHost, subagentKey, subagentSessionId } from "./subagent-host.ts";
import { ChildText, childState } from "./subagent-state.ts";
import { commitFailure, commitSuccess } from "./tool-call.ts";
import { guard, type TurnScope } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

/** How deep delegations nest: agents that delegate to each other in a cycle stop here. */
export const MAX_SUBAGENT_DEPTH = 4;

export const SUBAGENT_INPUT_SCHEMA = {
  type: "object",
  properties: {
    task: {
      type: "string",
      minLength: 1,
      maxLength: 100_000,
      description: "The task, with everything the agent needs: it sees nothing else",
    },
    payload: { description: "Optional structured data for the task" },
  },
  required: ["task"],
  additionalProperties: false,
} as const;

export function subagentModelTool(agentId: string): LanguageModelV3FunctionTool {
  return {
    type: "function",
    name: subagentToolName(agentId),
    description:
      `Delegate a task to the "${agentId}" agent and wait for its answer. ` +
      "It sees only the task (and payload) you send, so include everything it needs.",
    inputSchema: SUBAGENT_INPUT_SCHEMA as unknown as LanguageModelV3FunctionTool["inputSchema"],
  };
}

/** The subagent a render offers under `tool`, if any. */
export function subagentOf(subagents: readonly string[] | undefined, tool: string) {
  if (!subagents || !tool.startsWith("subagent_")) return undefined;
  return subagents.find((id) => subagentToolName(id) === tool);
}

export async function delegate(scope: TurnScope, call: ToolCallRecord, agentId: string) {
  const host = scope.ctx.subagents;
  if (!host) return commitFailure(scope, call, "This runtime cannot run subagents");
  const invalid =
    typeof call.input === "string"
      ? "the arguments are not a JSON object"
      : checkSchema(SUBAGENT_INPUT_SCHEMA, call.input, "input");
  if (invalid) return commitFailure(scope, call, `Invalid delegation: ${invalid}`);
  const { task, payload } = call.input as { task: string; payload?: JsonValue };
  const sessionId = subagentSessionId(scope.sessionId, call.callId);
  const base = { callId: call.callId, agentId, sessionId };
  try {
    const parentSession = await scope.ctx.store.getSession(scope.sessionId);
    if (!parentSession) return;
    const depth = (scope.creation.parent?.depth ?? 0) + 1;
    if (depth > MAX_SUBAGENT_DEPTH) {
      const message = `The ${agentId} agent was not started: delegations nest at most ${MAX_SUBAGENT_DEPTH} deep, and this session is a subagent ${depth - 1} levels down`;
      return commitFailure(scope, call, message);
    }
    const parent = {
      sessionId: scope.sessionId,
      turnId: call.turnId,
      callId: call.callId,
      agentId: scope.agentId,
      depth,
    };
    await host.create(parentSession, agentId, sessionId, parent);
    const input: AgentInput = { source: "subagent", text: task };
    if (payload !== undefined) input.payload = payload;
    const sent = await host.send(sessionId, input, subagentKey(scope.sessionId, call.callId));
    const resumed = sent.duplicate ? { resumed: true as const } : {};
    await record(scope, {
      type: "subagent.started",
      turnId: scope.turn.id,
      data: { ...base, turnId: sent.turnId, ...resumed },
    });
  } catch (error) {
    if (isFenceRefusal(error) || scope.signal.aborted) return;
    if (!(error instanceof OpenComputerError)) throw error;
    const message = `The ${agentId} agent could not start: ${error.message}`;
    return commitFailure(scope, call, message, "subagent_failed", [failed(scope, base, message)]);
  }
  return follow(scope, host, call, base);
}

type Delegation = { callId: string; agentId: string; sessionId: string };

/** Waits for the child to answer, telling the parent's watchers what the child waits for. */
async function follow(
  scope: TurnScope,
  host: SubagentHost,
  call: ToolCallRecord,
  base: Delegation,
) {
  const text = new ChildText();
  const told = new Set<string>();
  while (!scope.signal.aborted) {
    // Listening before reading: a commit between the read and the wait still wakes us.
    const wait = nextChange(host, base.sessionId, scope.aborted);
    let state: Awaited<ReturnType<typeof childState>>;
    try {
      state = await childState(scope.ctx.store, base.sessionId, base.agentId, text);
    } catch (error) {
      wait.stop();
      throw error;
    }
    if (state.kind === "answered") {
      wait.stop();
      const done: NewEvent = { type: "subagent.completed", turnId: scope.turn.id, data: base };
      return commitSuccess(scope, call, state.output, [done]);
    }
    if (state.kind === "failed") {
      wait.stop();
      return commitFailure(scope, call, state.message, "subagent_failed", [
        failed(scope, base, state.message),
      ]);
    }
    if (state.kind === "question" && !told.has(state.question.id)) {
      told.add(state.question.id);
      const { id, text: question, options } = state.question;
      await record(scope, {
        type: "subagent.waiting",
        turnId: scope.turn.id,
        data: { ...base, reason: "question", questionId: id, text: question, options },
      });
    }
    if (state.kind === "approval" && !told.has(state.approval.id)) {
      told.add(state.approval.id);
      const { id, tool, card } = state.approval;
      await record(scope, {
        type: "subagent.waiting",
        turnId: scope.turn.id,
        data: { ...base, reason: "approval", approvalId: id, tool, card },
      });
    }
    await wait.changed;
  }
}

function failed(scope: TurnScope, base: Delegation, message: string): NewEvent {
  return { type: "subagent.failed", turnId: scope.turn.id, data: { ...base, message } };
}

async function record(scope: TurnScope, event: NewEvent) {
  try {
    await write(scope.ctx, scope.sessionId, { ...guard(scope), ops: [], events: [event] });
  } catch (error) {
    if (!isFenceRefusal(error)) throw error;
  }
}
