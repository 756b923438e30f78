// What a render gets beyond the agent's own tools and the built-ins it selected: the tools of
// the MCP servers it attached (listed for the turn, mcp-turn.ts) and the deployment's skills
// (their names and descriptions in the system prompt, `load_skill` to read them). Which servers
// a render may attach, and where they are, comes from the deployment (AgentResources), never
// from agent code.

import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { McpServerSelection } from "@opencomputer/agent";
import { LOAD_SKILL_TOOL } from "@opencomputer/agent/internal";
import type { RenderedAgent } from "../ports/agent-execution.ts";
import type { AgentResources, SkillLibrary } from "../ports/agent-resources.ts";
import type { McpServerDeclaration } from "../ports/mcp.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { executeMcpCall } from "./mcp-call.ts";
import { listedTools, type McpToolTarget } from "./mcp-turn.ts";
import { executeSkillCall, loadSkillTool, skillsInstructions } from "./skill-call.ts";
import type { TurnScope } from "./turn-scope.ts";

/** One render's extra tools and what the prompt and the agent.rendered event say of them. */
export interface RenderCapabilities {
  tools: LanguageModelV3FunctionTool[];
  /** Model names of `tools`, for agent.rendered's enabledTools. */
  names: string[];
  mcpServers: string[];
  skills: string[];
  /** Appended to the agent's instructions in the system prompt. */
  instructions: string;
  /** mcp.unavailable, once per turn and server; written with the step's render event. */
  events: NewEvent[];
  mcpTools: Map<string, McpToolTarget>;
  skillLibrary?: SkillLibrary;
}

const EMPTY: RenderCapabilities = {
  tools: [],
  names: [],
  mcpServers: [],
  skills: [],
  instructions: "",
  events: [],
  mcpTools: new Map(),
};

const resourcesOf = new WeakMap<TurnScope, AgentResources>();

/** Reads the deployment's MCP servers and skills once per turn. */
export async function loadResources(scope: TurnScope): Promise<void> {
  const resources = await scope.ctx.agents.resources?.(scope.agentId, scope.deploymentId);
  resourcesOf.set(scope, resources ?? {});
}

/** The render's capabilities, or the message the turn fails with (an unknown server). */
export async function renderCapabilities(
  scope: TurnScope,
  render: RenderedAgent,
): Promise<RenderCapabilities | string> {
  const resources = resourcesOf.get(scope) ?? {};
  const selected = render.mcpServers ?? [];
  const skills = resources.skills?.list() ?? [];
  if (selected.length === 0 && skills.length === 0) return EMPTY;
  const declarations: McpServerDeclaration[] = [];
  for (const selection of selected) {
    const found = declarationFor(selection, resources.mcpServers);
    if (typeof found === "string") return `Agent ${scope.agentId}: ${found}`;
    declarations.push(found);
  }
  const caps: RenderCapabilities = {
    ...EMPTY,
    tools: [],
    names: [],
    events: [],
    mcpTools: new Map(),
  };
  caps.mcpServers = declarations.map((d) => d.id);
  const unavailable: string[] = [];
  const listings = await Promise.all(declarations.map((d) => listedTools(scope, d)));
  listings.forEach((listing, i) => {
    const server = declarations[i]!;
    if (!listing.ok) {
      unavailable.push(`- ${server.id}: ${listing.code}`);
      if (listing.fresh) {
        caps.events.push({
          type: "mcp.unavailable",
          turnId: scope.turn.id,
          data: { server: server.id, code: listing.code, message: listing.message },
        });
      }
      return;
    }
    for (const target of listing.tools) {
      caps.mcpTools.set(target.modelName, target);
      caps.names.push(target.modelName);
      caps.tools.push({
        type: "function",
        name: target.modelName,
        description: target.tool.description,
        inputSchema: target.tool.inputSchema as LanguageModelV3FunctionTool["inputSchema"],
      });
    }
  });
  if (unavailable.length > 0) {
    caps.instructions += `\n\nThese MCP servers are unavailable for now, so their tools are missing:\n${unavailable.join("\n")}`;
  }
  if (skills.length > 0 && resources.skills) {
    caps.skillLibrary = resources.skills;
    caps.skills = skills.map((s) => s.name);
    caps.tools.push(loadSkillTool(skills));
    caps.names.push(LOAD_SKILL_TOOL);
    caps.instructions = skillsInstructions(skills) + caps.instructions;
  }
  return caps;
}

/** Runs the call when it is one of these capabilities' tools; undefined otherwise. */
export function capabilityCall(
  scope: TurnScope,
  call: ToolCallRecord,
  caps: RenderCapabilities,
): Promise<void> | undefined {
  const target = caps.mcpTools.get(call.tool);
  if (target) return executeMcpCall(scope, call, target);
  if (call.tool === LOAD_SKILL_TOOL && caps.skillLibrary) {
    return executeSkillCall(scope, call, caps.skillLibrary);
  }
  return undefined;
}

function declarationFor(
  selection: McpServerSelection,
  declared: readonly McpServerDeclaration[] | undefined,
): McpServerDeclaration | string {
  const id = JSON.stringify(selection.id);
  if (declared === undefined) {
    if (selection.url === undefined) {
      return `useMcpServer(${id}): no MCP server ${id} is declared; pass its defineMcpServer() definition`;
    }
    return {
      id: selection.id,
      url: selection.url,
      ...(selection.connection === undefined ? {} : { connection: selection.connection }),
    };
  }
  const found = declared.find((d) => d.id === selection.id);
  if (!found) {
    const known = declared.map((d) => d.id).join(", ") || "none";
    return `useMcpServer(${id}): the deployment declares no MCP server ${id} (declared: ${known}); define it with defineMcpServer() in the agent's modules and build again`;
  }
  if (
    selection.url !== undefined &&
    (selection.url !== found.url || selection.connection !== found.connection)
  ) {
    return `useMcpServer(${id}): the definition differs from the one the deployment recorded; build again`;
  }
  return found;
}
