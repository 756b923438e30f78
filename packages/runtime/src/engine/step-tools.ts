// The tools one step offers the model, and what agent.rendered says the render selected.

import type { LanguageModelV3FunctionTool, LanguageModelV3ProviderTool } from "@ai-sdk/provider";
import type { RenderedAgent, ToolDescriptor } from "../ports/agent-execution.ts";
import type { BuiltInTool } from "../ports/built-in-tool.ts";
import { ASK_ID, ASK_MODEL_TOOL } from "./ask.ts";
import type { RenderCapabilities } from "./capabilities.ts";
import { memoryModelTool, memoryToolsOf } from "./memory-tools.ts";
import { subagentModelTool } from "./subagent-call.ts";
import type { TurnScope } from "./turn-scope.ts";

const EMPTY_OBJECT_SCHEMA = { type: "object", properties: {} } as const;

/** The tool names a render enables, its own tools first, then built-ins, MCP tools, skills. */
export function enabledTools(render: RenderedAgent, caps: RenderCapabilities): string[] {
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
export function modelTools(
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
export function renderedSelections(render: RenderedAgent, caps: RenderCapabilities) {
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
export function selectedBuiltIns(
  scope: TurnScope,
  render: RenderedAgent,
): Map<string, BuiltInTool> {
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
