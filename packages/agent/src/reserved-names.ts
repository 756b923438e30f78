// Tool names the platform keeps for itself. `ask` is the question tool; `load_skill` is the tool
// that reads an agent's packaged skills; every name starting with `mcp__` belongs to a tool of
// an attached MCP server (`mcp__<serverId>__<tool>`). Reserving them is what guarantees the
// model never sees two tools with one name, whatever a server or an author calls theirs.

/** The prefix of every MCP tool name the model sees. */
export const MCP_TOOL_PREFIX = "mcp__";

/** The built-in tool that loads a skill's body or one of its files. */
export const LOAD_SKILL_TOOL = "load_skill";

/** Why `name` cannot be an author's tool name, or undefined when it can. */
export function reservedToolName(name: string): string | undefined {
  if (name === "ask") {
    return `"name" "ask" is reserved: ask is the platform's question tool; select it with useTool("ask") instead of defining it`;
  }
  if (name === LOAD_SKILL_TOOL) {
    return `"name" "${LOAD_SKILL_TOOL}" is reserved: it is the built-in tool that loads the agent's skills (skills/<name>/SKILL.md); choose another name`;
  }
  if (name.startsWith(MCP_TOOL_PREFIX)) {
    return `"name" ${JSON.stringify(name)} is reserved: names starting with "${MCP_TOOL_PREFIX}" belong to the tools of MCP servers attached with useMcpServer(); choose another name`;
  }
  return undefined;
}
