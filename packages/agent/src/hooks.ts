// Hooks record what an agent selects during one render. They only touch the shared render
// state (see render-context.ts), so hooks from any copy of this package work with a render
// started by any other copy.

import { isTool } from "./brand.ts";
import {
  isMcpServer,
  MCP_SERVER_ID_PATTERN,
  type McpServer,
  mcpServerDeclaration,
} from "./define-mcp-server.ts";
import { TOOL_NAME_PATTERN } from "./define-tool.ts";
import { describeValue } from "./describe-value.ts";
import { RenderError } from "./errors.ts";
import { currentRender, type RenderState } from "./render-context.ts";
import type { AgentInput, McpServerSelection, ModelSelection, Tool } from "./types.ts";

/**
 * Selects the model for the next step: `"provider/model"` or `{ provider, model }`.
 * When called more than once in a render the last call wins, so an agent can set a
 * default and override it under a condition.
 */
export function useModel(model: ModelSelection): void {
  const state = currentRender();
  state.model = normaliseModelId(model);
}

/** Offers a tool to the model: one returned by `defineTool`, or a built-in id such as "ask". */
export function useTool(tool: Tool | string): void {
  const state = currentRender();
  if (typeof tool === "string") {
    selectBuiltIn(state, tool);
    return;
  }
  if (!isTool(tool)) {
    const named = namedLike(tool);
    throw new RenderError(
      "tool_invalid",
      `useTool expects a tool returned by defineTool() or a built-in tool id such as "ask"; got ${named ?? describeValue(tool)}` +
        (named ? "; wrap the definition in defineTool()" : ""),
    );
  }
  selectTool(state, tool);
}

/** The input of the turn being rendered. */
export function useInput(): AgentInput {
  return currentRender().input;
}

/** Alias of `useInput`. */
export const useCurrentInput: () => AgentInput = useInput;

function selectBuiltIn(state: RenderState, id: string): void {
  if (state.builtInTools.includes(id)) return;
  if (!TOOL_NAME_PATTERN.test(id)) {
    throw new RenderError(
      "tool_invalid",
      `useTool(${JSON.stringify(id)}): a built-in tool id contains only letters, digits, underscores and hyphens`,
      { tool: id },
    );
  }
  const available = state.builtInToolIds;
  if (available !== undefined && !available.includes(id)) {
    const list = available.length > 0 ? available.join(", ") : "none";
    throw new RenderError(
      "tool_unknown_builtin",
      `useTool(${JSON.stringify(id)}): this runtime has no built-in tool ${JSON.stringify(id)}; available built-in tools: ${list}`,
      { tool: id, available: [...available] },
    );
  }
  if (state.tools.some((selected) => selected.name === id)) {
    throw new RenderError(
      "tool_name_conflict",
      `useTool(${JSON.stringify(id)}): the built-in tool ${JSON.stringify(id)} has the same name as a tool already selected with useTool(); the model could not tell them apart, so rename your tool`,
      { tool: id },
    );
  }
  state.builtInTools.push(id);
}

function selectTool(state: RenderState, tool: Tool): void {
  if (state.tools.includes(tool)) return;
  const name = tool.name;
  if (state.tools.some((selected) => selected.name === name)) {
    throw new RenderError(
      "tool_name_conflict",
      `useTool: two different tools are named ${JSON.stringify(name)}; the model calls tools by name, so select only one of them or rename one`,
      { tool: name },
    );
  }
  if (state.builtInTools.includes(name)) {
    throw new RenderError(
      "tool_name_conflict",
      `useTool: the tool ${JSON.stringify(name)} has the same name as the built-in tool selected with useTool(${JSON.stringify(name)}); rename your tool`,
      { tool: name },
    );
  }
  if (tool.result) {
    const other = state.tools.find((selected) => selected.result);
    if (other) {
      throw new RenderError(
        "result_tool_conflict",
        `useTool: an agent has at most one result tool, but both ${JSON.stringify(other.name)} and ${JSON.stringify(name)} have result: true`,
        { tool: name, otherTool: other.name },
      );
    }
  }
  state.tools.push(tool);
}

function normaliseModelId(model: unknown): string {
  const example = `use "provider/model" or { provider, model }, e.g. "anthropic/claude-sonnet-4.6"`;
  if (typeof model === "string") {
    const slash = model.indexOf("/");
    if (slash > 0 && slash < model.length - 1 && !/\s/.test(model)) return model;
    throw new RenderError(
      "model_id_invalid",
      `useModel(${JSON.stringify(model)}): not a model id; ${example}`,
      { model },
    );
  }
  if (typeof model === "object" && model !== null) {
    const { provider, model: name } = model as { provider?: unknown; model?: unknown };
    const providerOk = typeof provider === "string" && /^[^/\s]+$/.test(provider);
    const nameOk = typeof name === "string" && /^\S+$/.test(name);
    if (providerOk && nameOk) return `${provider}/${name}`;
    const which = providerOk ? "model" : "provider";
    throw new RenderError(
      "model_id_invalid",
      `useModel({ provider, model }): "${which}" must be a non-empty string without spaces${which === "provider" ? " or slashes" : ""}; ${example}`,
      { path: which },
    );
  }
  throw new RenderError(
    "model_id_invalid",
    `useModel: expected a model id; got ${describeValue(model)}; ${example}`,
  );
}

function namedLike(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const name = (value as { name?: unknown }).name;
  return typeof name === "string"
    ? `an object named ${JSON.stringify(name)} that defineTool() did not return`
    : undefined;
}

/**
 * Attaches an MCP server's tools to this render: a definition from `defineMcpServer`, or the id
 * of one the deployment declares. Conditional like every hook; attaching twice is one server.
 */
export function useMcpServer(server: McpServer | string): void {
  const state = currentRender();
  const selected = state.mcpServers;
  if (!selected) {
    throw new RenderError(
      "render_version_mismatch",
      "useMcpServer: the runtime rendering this agent predates MCP servers; install matching versions of @opencomputer/agent",
    );
  }
  const selection = mcpSelection(server);
  const existing = selected.find((s) => s.id === selection.id);
  if (!existing) {
    selected.push(selection);
    return;
  }
  // A bare id agrees with any definition of that id; two definitions must be the same server.
  const same =
    selection.url === undefined ||
    existing.url === undefined ||
    (selection.url === existing.url && selection.connection === existing.connection);
  if (!same) {
    throw new RenderError(
      "mcp_server_conflict",
      `useMcpServer: two different servers have the id ${JSON.stringify(selection.id)}; ids name one server in a deployment`,
      { server: selection.id },
    );
  }
  if (existing.url === undefined && selection.url !== undefined) Object.assign(existing, selection);
}

function mcpSelection(server: unknown): McpServerSelection {
  if (typeof server === "string") {
    if (!MCP_SERVER_ID_PATTERN.test(server)) {
      throw new RenderError(
        "mcp_server_invalid",
        `useMcpServer(${JSON.stringify(server)}): not an MCP server id (a letter, then up to 31 letters, digits or "-")`,
        { server },
      );
    }
    return { id: server };
  }
  if (!isMcpServer(server)) {
    throw new RenderError(
      "mcp_server_invalid",
      `useMcpServer expects a server returned by defineMcpServer() or a declared server id; got ${describeValue(server)}`,
    );
  }
  return mcpServerDeclaration(server);
}
