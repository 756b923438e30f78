// The MCP servers of each agent: every defineMcpServer() call its modules made while they loaded
// (the loader reports them, load-child.ts), recorded in the deployment; the runtime connects to
// nothing else. Checked here: one declaration per id, every `useMcpServer("<id>")` written with a
// literal id names a declared server (file and line of the call), and, once the connections are
// known (`checkMcpConnections`), each server's connection exists and can reach its URL.

import type { McpServerDeclaration } from "@opencomputer/agent";
import type { ConnectionDeclaration } from "@opencomputer/agent/internal";
import ts from "typescript";
import type { BuildError } from "./errors.ts";
import type { LoadedMcpServer } from "./load-protocol.ts";
import type { LoadResult } from "./load-tools.ts";
import { errorAt, type ParsedModule } from "./parse.ts";
import { type Project, relativePath } from "./project.ts";
import type { AgentState } from "./sources.ts";

export interface AgentMcp {
  /** Sorted by id. */
  servers: McpServerDeclaration[];
  /** Connections given to defineMcpServer as objects (not in a connections/ module). */
  inlineConnections: ConnectionDeclaration[];
  /** Where each server was defined, for errors found later. */
  locations: Map<string, Pick<BuildError, "file" | "line" | "column">>;
}

export function agentMcp(
  project: Project,
  state: AgentState,
  loaded: LoadResult,
  errors: BuildError[],
): AgentMcp {
  const byId = new Map<string, LoadedMcpServer>();
  const locations = new Map<string, Pick<BuildError, "file" | "line" | "column">>();
  const inline = new Map<string, ConnectionDeclaration>();
  for (const mod of state.modules) {
    for (const found of loaded.mcpServers.get(mod.file) ?? []) {
      const at = found.location
        ? {
            file: relativePath(project, found.location.file),
            line: found.location.line,
            column: found.location.column,
          }
        : { file: mod.rel, line: 1, column: 1 };
      const id = found.declaration.id;
      const first = byId.get(id);
      if (first) {
        if (JSON.stringify(first.declaration) !== JSON.stringify(found.declaration)) {
          errors.push({
            code: "mcp_server_duplicate",
            message: `Agent "${state.entry.agentId}" defines two different MCP servers with the id "${id}" (${describeAt(locations.get(id))} and here); ids name one server`,
            ...at,
          });
        }
        continue;
      }
      byId.set(id, found);
      locations.set(id, at);
      if (found.connection) inline.set(found.connection.id, found.connection);
    }
  }
  for (const mod of state.modules) {
    for (const call of literalSelections(mod)) {
      if (byId.has(call.id)) continue;
      const known = [...byId.keys()].sort().join(", ") || "none";
      errors.push(
        errorAt(
          mod,
          call.node,
          "mcp_server_unknown",
          `useMcpServer("${call.id}"): agent "${state.entry.agentId}" declares no MCP server "${call.id}" (declared: ${known}); define it with defineMcpServer({ id: "${call.id}", url }) in the agent's modules`,
        ),
      );
    }
  }
  return {
    servers: [...byId.values()].map((s) => s.declaration).sort((a, b) => (a.id < b.id ? -1 : 1)),
    inlineConnections: [...inline.values()],
    locations,
  };
}

/**
 * Each server's connection must be declared (in connections/ or given inline) and able to
 * reach the server: the same origin, the URL's path under its pathPrefix, POST allowed. Returns
 * the agent's connections with the inline ones added.
 */
export function checkMcpConnections(
  agentId: string,
  mcp: AgentMcp,
  declared: readonly ConnectionDeclaration[],
  errors: BuildError[],
): ConnectionDeclaration[] {
  const all = [...declared];
  for (const connection of mcp.inlineConnections) {
    const same = all.find((c) => c.id === connection.id);
    if (!same) all.push(connection);
    else if (JSON.stringify(same) !== JSON.stringify(connection)) {
      const at = mcp.servers.find((s) => s.connection === connection.id);
      errors.push({
        code: "mcp_connection_mismatch",
        message: `Agent "${agentId}": the connection "${connection.id}" given to defineMcpServer differs from the connection of that id in connections/; use one declaration`,
        ...location(mcp, at?.id),
      });
    }
  }
  for (const server of mcp.servers) {
    if (server.connection === undefined) continue;
    const connection = all.find((c) => c.id === server.connection);
    const at = location(mcp, server.id);
    if (!connection) {
      errors.push({
        code: "mcp_connection_unknown",
        message: `MCP server "${server.id}" names the connection "${server.connection}", which agent "${agentId}" does not declare; declare it with defineConnection in opencomputer/agents/${agentId}/connections/ or opencomputer/connections/`,
        ...at,
      });
      continue;
    }
    const url = new URL(server.url);
    const why =
      url.origin !== connection.origin
        ? `its origin is ${connection.origin}, not ${url.origin}`
        : !url.pathname.startsWith(connection.pathPrefix)
          ? `its pathPrefix ${connection.pathPrefix} does not cover ${url.pathname}`
          : !connection.methods.includes("POST")
            ? "it does not allow POST, which MCP requests use"
            : undefined;
    if (why) {
      errors.push({
        code: "mcp_connection_mismatch",
        message: `MCP server "${server.id}" (${server.url}) cannot be reached through the connection "${connection.id}": ${why}`,
        ...at,
      });
    }
  }
  return all.sort((a, b) => (a.id < b.id ? -1 : 1));
}

function location(mcp: AgentMcp, id: string | undefined) {
  return (id && mcp.locations.get(id)) || { file: "opencomputer", line: 1, column: 1 };
}

function describeAt(at: Pick<BuildError, "file" | "line"> | undefined): string {
  return at ? `${at.file}:${at.line}` : "elsewhere";
}

/** `useMcpServer("<literal>")` calls of a module (any other argument is checked at render). */
function literalSelections(mod: ParsedModule): Array<{ id: string; node: ts.Node }> {
  const found: Array<{ id: string; node: ts.Node }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && isUseMcpServer(node.expression)) {
      const arg = node.arguments[0];
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) {
        found.push({ id: arg.text, node: arg });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(mod.source);
  return found;
}

function isUseMcpServer(callee: ts.Expression): boolean {
  if (ts.isIdentifier(callee)) return callee.text === "useMcpServer";
  return ts.isPropertyAccessExpression(callee) && callee.name.text === "useMcpServer";
}
