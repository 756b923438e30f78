// The render in progress lives on globalThis under a registry symbol, not in a module
// variable: the runtime may call renderAgent from one copy of this package while the
// author's hooks come from another, and both must see the same render.
//
// A single slot is safe because renderAgent is synchronous: no other render can start
// between entering and leaving one, except a nested render, which saves and restores it.
//
// The state is plain data with a version so copies of different versions can tell
// whether they understand each other.

import { RenderError } from "./errors.ts";
import type { AgentInput, JsonObject, McpServerSelection, Tool } from "./types.ts";
import type { MemoryProjection } from "./use-memory.ts";

export const RENDER_CONTEXT_SLOT = Symbol.for("opencomputer.agent.renderContext");

export const RENDER_STATE_VERSION = 1;

export interface RenderState {
  readonly version: typeof RENDER_STATE_VERSION;
  readonly input: AgentInput;
  readonly builtInToolIds: readonly string[] | undefined;
  /** The session's data, frozen (absent when a runtime gives none). */
  readonly sessionData?: Readonly<JsonObject>;
  model: string | undefined;
  /** In order of first selection; the same tool object appears once. */
  readonly tools: Tool[];
  readonly builtInTools: string[];
  /** What the runtime recalled for each bound resource (absent: the session binds none). */
  readonly memory?: Readonly<Record<string, MemoryProjection>>;
  /** Resources `useMemory` selected, in order; their tools are offered to the model. */
  readonly memoryUsed?: string[];
  /**
   * MCP servers attached with useMcpServer, in order of first selection. Optional so a state
   * made by an older copy (without it) is told apart from an empty selection.
   */
  readonly mcpServers?: McpServerSelection[];
  /** `useSubagent` ids in order of first selection (absent in a render of an older copy). */
  subagents?: string[];
  /** `useConnection` ids in order of first selection. */
  connections?: string[];
}

type Slot = { [RENDER_CONTEXT_SLOT]?: RenderState | undefined };

export function currentRender(): RenderState {
  const state = (globalThis as Slot)[RENDER_CONTEXT_SLOT];
  if (state === undefined) {
    throw new RenderError(
      "hooks_outside_render",
      "OpenComputer hooks can only run while rendering an agent",
    );
  }
  if (state.version !== RENDER_STATE_VERSION) {
    throw new RenderError(
      "render_version_mismatch",
      `This copy of @opencomputer/agent understands render state version ${RENDER_STATE_VERSION}, but the runtime is rendering with version ${String(state.version)}; install matching versions`,
    );
  }
  return state;
}

/** Makes `state` current and returns what was current before, for `leaveRender`. */
export function enterRender(state: RenderState): RenderState | undefined {
  const slot = globalThis as Slot;
  const previous = slot[RENDER_CONTEXT_SLOT];
  slot[RENDER_CONTEXT_SLOT] = state;
  return previous;
}

export function leaveRender(previous: RenderState | undefined): void {
  (globalThis as Slot)[RENDER_CONTEXT_SLOT] = previous;
}
