// Built-in tools a render gets without asking. The platform's docs give every session the
// `shell` tool ("every session runs on its own computer, and the model runs commands on it
// through the built-in shell tool"), so an agent copied from them never calls useTool("shell").
// A runtime chooses the ids (`defaultTools`, by default `shell` where computers are configured);
// a project turns them off with `shell: false` in opencomputer/project.ts, which its deployments
// record (`LoadedAgent.defaultTools`).

import type { RenderedAgent } from "../ports/agent-execution.ts";
import type { LoadedAgent } from "../ports/agent-resolver.ts";
import type { BuiltInTool } from "../ports/built-in-tool.ts";
import type { TurnScope } from "./turn-scope.ts";

/** The id of the computers' command tool, which every session gets by default. */
export const SHELL_ID = "shell";

/** The runtime's default ids: `shell` when this runtime offers it, else none. */
export function runtimeDefaultTools(
  configured: readonly string[] | undefined,
  builtIns: readonly BuiltInTool[],
): readonly string[] {
  if (configured) return configured;
  return builtIns.some((t) => t.id === SHELL_ID) ? [SHELL_ID] : [];
}

/** What a session's renders get without useTool: the deployment's choice, else the runtime's. */
export function defaultToolsFor(scope: TurnScope, loaded: LoadedAgent): readonly string[] {
  const ids = loaded.defaultTools ?? scope.ctx.defaultTools;
  // Only what this session may select at all (its runtime offers it).
  return ids.filter((id) => scope.builtInToolIds.includes(id));
}

/**
 * Adds the default built-ins a render did not select itself. An agent's own tool of the same
 * name wins: the model calls tools by name, and the author's tool is the one they meant.
 */
export function withDefaultTools(render: RenderedAgent, ids: readonly string[]): RenderedAgent {
  for (const id of ids) {
    if (render.builtInTools.includes(id)) continue;
    if (render.tools.some((tool) => tool.name === id)) continue;
    render.builtInTools.push(id);
  }
  return render;
}
