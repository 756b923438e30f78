// A turn's MCP clients. The first render of a turn that attaches a server connects to it and
// lists its tools; every later render and call of the turn reuses that client and that list,
// and the turn's end closes them. So a server is asked for its tools once per turn (a server
// whose tools change is seen from the next turn on), and a server that cannot be listed is
// reported once (mcp.unavailable) and left out of the turn's steps; the next turn tries again.

import type { JsonSchema } from "@opencomputer/agent";
import {
  type McpConnector,
  McpError,
  type McpFailureCode,
  type McpServerDeclaration,
  type McpSession,
  type McpToolInfo,
} from "../ports/mcp.ts";
import { type EgressLease, leaseEgress } from "./egress-for.ts";
import { mcpToolName } from "./mcp-names.ts";
import type { TurnScope } from "./turn-scope.ts";

/** What a runtime does about MCP: the client, and the time limits of listing and calling. */
export interface McpSettings {
  connector: McpConnector;
  /** A tool call's limit (default 120 000 ms); progress from the server does not extend it. */
  callTimeoutMs: number;
  /** Connecting and listing a server's tools (default 30 000 ms). */
  listTimeoutMs: number;
}

/** Tools one server offers at most; a server listing more is cut here. */
export const MCP_MAX_TOOLS_PER_SERVER = 128;
const MAX_DESCRIPTION = 4000;

/** One MCP tool as the model sees it, and where it goes. */
export interface McpToolTarget {
  server: McpServerDeclaration;
  tool: McpToolInfo;
  modelName: string;
}

interface ServerState {
  declaration: McpServerDeclaration;
  session?: McpSession;
  tools?: McpToolTarget[];
  failure?: { code: McpFailureCode; message: string };
  reported?: boolean;
  listing?: Promise<void>;
}

const turns = new WeakMap<TurnScope, Map<string, ServerState>>();

function servers(scope: TurnScope): Map<string, ServerState> {
  let map = turns.get(scope);
  if (!map) {
    map = new Map();
    turns.set(scope, map);
  }
  return map;
}

/** Closes the turn's clients (at the turn's end, whatever ended it). */
export async function closeTurnMcp(scope: TurnScope): Promise<void> {
  const map = turns.get(scope);
  if (!map) return;
  turns.delete(scope);
  await Promise.allSettled([...map.values()].map((s) => s.session?.close()));
}

/**
 * The server's tools for this turn, or why there are none. `fresh` is true the first time a
 * failure is returned, so the caller reports it once.
 */
export async function listedTools(
  scope: TurnScope,
  declaration: McpServerDeclaration,
): Promise<
  | { ok: true; tools: McpToolTarget[] }
  | { ok: false; code: McpFailureCode; message: string; fresh: boolean }
> {
  const map = servers(scope);
  let state = map.get(declaration.id);
  if (!state) {
    state = { declaration };
    map.set(declaration.id, state);
  }
  state.listing ??= list(scope, state);
  await state.listing;
  if (state.tools) return { ok: true, tools: state.tools };
  const failure = state.failure ?? { code: "mcp_server_unavailable", message: "not listed" };
  const fresh = !state.reported;
  state.reported = true;
  return { ok: false, ...failure, fresh };
}

/** The turn's client of a listed server, connecting again when a failed call dropped it. */
export async function sessionFor(
  scope: TurnScope,
  server: McpServerDeclaration,
  lease: EgressLease,
): Promise<McpSession> {
  const state = servers(scope).get(server.id);
  if (state?.session) return state.session;
  const settings = mcpSettings(scope);
  const session = await settings.connector.open(server, {
    signal: scope.signal,
    timeoutMs: settings.listTimeoutMs,
    ...(lease.egress ? { egress: lease.egress } : {}),
  });
  if (state) state.session = session;
  else servers(scope).set(server.id, { declaration: server, session });
  return session;
}

/** Forgets the turn's client of `server` (after a failure that may have broken it). */
export function dropSession(scope: TurnScope, server: McpServerDeclaration): void {
  const state = servers(scope).get(server.id);
  if (!state?.session) return;
  const { session } = state;
  state.session = undefined;
  void session.close().catch(() => {});
}

/**
 * The egress lease of one operation: a server with a connection needs the gateway, which adds
 * the connection's secret headers; one without is reached directly and needs none.
 */
export async function mcpEgress(
  scope: TurnScope,
  server: McpServerDeclaration,
): Promise<EgressLease> {
  if (server.connection === undefined) return { egress: undefined, end: async () => {} };
  if (!scope.ctx.egress) {
    throw new McpError(
      "mcp_egress_unavailable",
      `MCP server "${server.id}" is authorized by the connection "${server.connection}", but this runtime has no egress gateway to add its secret headers`,
      { server: server.id },
    );
  }
  // Not ended by the turn's abort, as agent code's grants are: the client itself stops on the
  // abort, and the cancellation it then sends to the server needs the grant. The operation
  // ends the lease once its outcome (and that cancellation) is settled.
  return leaseEgress(scope.ctx, {
    sessionId: scope.sessionId,
    agentId: scope.agentId,
    deploymentId: scope.deploymentId,
    turnId: scope.turn.id,
  });
}

export function mcpSettings(scope: TurnScope): McpSettings {
  const settings = scope.ctx.mcp;
  if (!settings) {
    throw new McpError(
      "mcp_server_unavailable",
      "this runtime has no MCP client (createRuntime's `mcp` option, e.g. createMcpConnector from @opencomputer/mcp)",
    );
  }
  return settings;
}

export function asMcpFailure(error: unknown, server: McpServerDeclaration) {
  if (error instanceof McpError)
    return { code: error.code as McpFailureCode, message: error.message };
  return {
    code: "mcp_server_unavailable" as const,
    message: `MCP server "${server.id}" failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

async function list(scope: TurnScope, state: ServerState): Promise<void> {
  const server = state.declaration;
  let lease: EgressLease | undefined;
  try {
    const settings = mcpSettings(scope);
    lease = await mcpEgress(scope, server);
    const session = await sessionFor(scope, server, lease);
    const tools = await session.listTools({
      signal: scope.signal,
      timeoutMs: settings.listTimeoutMs,
      ...(lease.egress ? { egress: lease.egress } : {}),
    });
    state.tools = targets(server, tools);
  } catch (error) {
    state.failure = asMcpFailure(error, server);
    dropSession(scope, server);
  } finally {
    await lease?.end();
  }
}

function targets(server: McpServerDeclaration, tools: McpToolInfo[]): McpToolTarget[] {
  const seen = new Set<string>();
  const out: McpToolTarget[] = [];
  for (const tool of tools) {
    if (out.length >= MCP_MAX_TOOLS_PER_SERVER) break;
    const modelName = mcpToolName(server.id, tool.name);
    if (seen.has(modelName)) continue;
    seen.add(modelName);
    out.push({
      server,
      modelName,
      tool: {
        name: tool.name,
        description: tool.description.slice(0, MAX_DESCRIPTION),
        inputSchema: objectSchema(tool.inputSchema),
      },
    });
  }
  return out;
}

/** MCP requires an object schema; anything else is offered as "any object". */
function objectSchema(schema: JsonSchema): JsonSchema {
  return typeof schema === "object" && schema !== null && schema.type === "object"
    ? schema
    : { type: "object" };
}
