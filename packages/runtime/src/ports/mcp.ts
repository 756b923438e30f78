// The port for MCP servers: the runtime (the control plane), never agent code, holds the MCP
// client. The engine lists a server's tools for a turn and calls them through an McpConnector;
// @opencomputer/mcp implements it with the official SDK over Streamable HTTP. Requests to a
// server that names a connection go through the egress gateway with the token in `egress`,
// which adds the connection's secret headers: neither the engine nor agent code sees them.

import {
  type JsonSchema,
  type JsonValue,
  type McpServerDeclaration,
  OpenComputerError,
} from "@opencomputer/agent";
import type { Egress } from "./agent-execution.ts";

export type { McpServerDeclaration };

/** Why an MCP operation failed; each is the `code` of a failed call's tool.failed. */
export const MCP_FAILURE_CODES = {
  mcp_server_unavailable: "the server could not be reached or did not answer as MCP",
  mcp_unauthorized: "the server refused the credentials (401/403)",
  mcp_egress_refused: "the egress gateway refused the request (e.g. a secret not set)",
  mcp_egress_unavailable: "the server needs a connection but this runtime has no egress gateway",
  mcp_timeout: "the server did not answer within the time limit",
  mcp_cancelled: "the call was cancelled (interrupt, end of the session)",
  mcp_tool_error: "the tool ran and reported an error (isError)",
  mcp_tool_unknown: "the server does not have that tool (any more)",
  mcp_protocol_error: "the server answered with something that is not valid MCP",
  mcp_output_too_large: "the tool's result is larger than the tool output limit",
} as const;

export type McpFailureCode = keyof typeof MCP_FAILURE_CODES;

/** An MCP operation that failed, with its code and a message that names the server. */
export class McpError extends OpenComputerError {
  constructor(
    code: McpFailureCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(code, message, details, options);
  }
}

/** A tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export type McpCallOutcome =
  | { ok: true; output: JsonValue }
  | { ok: false; code: McpFailureCode; message: string };

/** Per operation: the abort, the time limit, and the egress grant when the server has a connection. */
export interface McpOperationOptions {
  signal: AbortSignal;
  timeoutMs: number;
  egress?: Egress;
}

export interface McpCallOptions extends McpOperationOptions {
  /** MCP progress notifications, as JSON metadata for tool.progress. */
  onProgress(metadata: JsonValue): void;
}

/** One connected client of one server (the engine keeps one per turn and server). */
export interface McpSession {
  /** Every tool the server lists (following pagination, bounded); throws McpError. */
  listTools(options: McpOperationOptions): Promise<McpToolInfo[]>;
  /** Never throws: every failure is an outcome with its code. */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: McpCallOptions,
  ): Promise<McpCallOutcome>;
  close(): Promise<void>;
}

export interface McpConnector {
  /** Connects (the initialize handshake); throws McpError. */
  open(server: McpServerDeclaration, options: McpOperationOptions): Promise<McpSession>;
}
