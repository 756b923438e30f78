// The names MCP tools have for the model: `mcp__<serverId>__<tool>`. Authors cannot define a
// tool starting with `mcp__` (defineTool and the build refuse it) and server ids have no `_`,
// so a name can neither collide with the agent's own tools nor with another server's. A tool
// name outside the providers' alphabet or too long for their 64 characters gets a readable
// stem and a digest of the original, the same on every listing, so a call recorded before a
// crash still finds its tool after the restart.

import { createHash } from "node:crypto";
import { MCP_TOOL_PREFIX } from "@opencomputer/agent/internal";

const MAX_NAME = 64;

export function mcpToolName(serverId: string, tool: string): string {
  const base = `${MCP_TOOL_PREFIX}${serverId}__`;
  const clean = tool.replace(/[^a-zA-Z0-9_-]/g, "_");
  if (clean === tool && clean.length > 0 && base.length + clean.length <= MAX_NAME) {
    return base + clean;
  }
  const digest = createHash("sha256").update(tool).digest("hex").slice(0, 8);
  const room = Math.max(0, MAX_NAME - base.length - digest.length - 1);
  return `${base}${clean.slice(0, room)}_${digest}`;
}
