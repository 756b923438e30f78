// Rendering runs the author's agent function once, collecting what its hooks select, and
// turns it into what the next model step may use. The runtime renders before every step.

import { describeValue } from "./describe-value.ts";
import { RenderError } from "./errors.ts";
import { deepFreeze } from "./freeze.ts";
import {
  enterRender,
  leaveRender,
  RENDER_STATE_VERSION,
  type RenderState,
} from "./render-context.ts";
import type { RenderContext, RenderResult } from "./types.ts";
import { subagentToolName } from "./use-subagent.ts";

/**
 * Runs `agent` with hooks bound to `context` and returns its selections. The agent must
 * be synchronous. Errors the agent throws propagate unchanged; rule violations are
 * RenderErrors. Typed loosely because the runtime calls code it has only just loaded.
 */
export function renderAgent(agent: () => unknown, context: RenderContext): RenderResult {
  if (typeof agent !== "function") {
    throw new RenderError(
      "agent_invalid",
      `renderAgent: the agent must be a function (the default export of agent.ts); got ${describeValue(agent)}`,
    );
  }
  const state: RenderState = {
    version: RENDER_STATE_VERSION,
    input: context.input,
    builtInToolIds: context.builtInToolIds,
    sessionData: deepFreeze(context.sessionData ?? {}),
    model: undefined,
    tools: [],
    builtInTools: [],
    ...(context.memory ? { memory: context.memory } : {}),
    memoryUsed: [],
    mcpServers: [],
    subagents: [],
    connections: [],
  };

  const previous = enterRender(state);
  let instructions: unknown;
  try {
    instructions = agent();
  } finally {
    leaveRender(previous);
  }

  if (isThenable(instructions)) {
    // The async agent would keep running without a render, and a rejection nobody awaits
    // would crash the process; swallow it, the RenderError below is the failure to report.
    Promise.resolve(instructions).catch(() => {});
    throw new RenderError(
      "agent_async",
      "The agent function must be synchronous: it returned a Promise. Remove `async` and do slow work in a tool instead; the agent is rendered before every model step",
    );
  }
  if (typeof instructions !== "string") {
    throw new RenderError(
      "instructions_invalid",
      `The agent function must return its instructions as a string; it returned ${describeValue(instructions)}`,
      { returned: describeValue(instructions) },
    );
  }

  const subagents = [...(state.subagents ?? [])];
  checkSubagentNames(state, subagents);
  return {
    model: state.model,
    tools: [...state.tools],
    builtInTools: [...state.builtInTools],
    memory: [...(state.memoryUsed ?? [])],
    mcpServers: (state.mcpServers ?? []).map((s) => ({ ...s })),
    subagents,
    connections: [...(state.connections ?? [])],
    instructions,
  };
}

/** A delegation tool must not share its name with a tool the agent selected. */
function checkSubagentNames(state: RenderState, subagents: readonly string[]): void {
  for (const id of subagents) {
    const name = subagentToolName(id);
    if (state.tools.some((t) => t.name === name) || state.builtInTools.includes(name)) {
      throw new RenderError(
        "tool_name_conflict",
        `useSubagent(${JSON.stringify(id)}): its delegation tool is named ${JSON.stringify(name)}, like a tool selected with useTool(); rename that tool`,
        { tool: name },
      );
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
