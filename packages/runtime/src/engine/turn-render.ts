// Rendering the agent for a step (after recalling its memory), and failing a turn that cannot go on.

import { RenderError } from "@opencomputer/agent/internal";
import { type AgentHandle, type RenderedAgent, WorkerLostError } from "../ports/agent-execution.ts";
import type { TurnError } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { ASK_ID } from "./ask.ts";
import { withDefaultTools } from "./default-tools.ts";
import { type Recalled, recallMemory, rememberRecall } from "./memory-recall.ts";
import { settleTurn } from "./settle.ts";
import { knownState, type TurnScope, traceOf } from "./turn-scope.ts";

/** Recalls the session's memory, then renders with it; a message when either fails. */
export async function recallAndRender(
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

export async function failTurn(scope: TurnScope, error: TurnError, events: NewEvent[] = []) {
  await settleTurn(
    scope.ctx,
    scope.turn,
    { status: "failed", error },
    { fence: scope.fence, events, known: knownState(scope), trace: traceOf(scope) },
  );
}
