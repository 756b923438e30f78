// Every way an MCP operation can fail, as one McpError with a stable code and a message that
// names the server (and the tool), so the model and the log can tell a server that is down from
// one that refused its credentials, timed out, or answered with something else.

import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError as SdkMcpError } from "@modelcontextprotocol/sdk/types.js";
import { OpenComputerError } from "@opencomputer/agent";
import { McpError, type McpServerDeclaration } from "@opencomputer/runtime";

type Operation = "connect" | "list" | "call";

export function mcpFailure(
  error: unknown,
  server: McpServerDeclaration,
  signal: AbortSignal,
  operation: Operation,
  tool?: string,
): McpError {
  if (error instanceof McpError) return error;
  const what = tool ? `MCP tool ${tool} of server "${server.id}"` : `MCP server "${server.id}"`;
  const fail = (code: ConstructorParameters<typeof McpError>[0], message: string) =>
    new McpError(code, message, { server: server.id, ...(tool ? { tool } : {}) }, { cause: error });
  if (signal.aborted) return fail("mcp_cancelled", `${what}: the call was cancelled`);
  if (error instanceof SdkMcpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return fail("mcp_timeout", `${what} did not answer in time (${operation})`);
    }
    if (operation === "call") {
      const unknown = error.code === ErrorCode.InvalidParams && /tool/i.test(error.message);
      return fail(unknown ? "mcp_tool_unknown" : "mcp_tool_error", `${what}: ${error.message}`);
    }
    return fail("mcp_protocol_error", `${what}: ${error.message}`);
  }
  if (error instanceof OpenComputerError && error.code.startsWith("egress_")) {
    if (error.code === "egress_upstream_failed") {
      return fail("mcp_server_unavailable", `${what} cannot be reached: ${error.message}`);
    }
    return fail(
      "mcp_egress_refused",
      `${what}: the egress gateway refused the request: ${error.message}`,
    );
  }
  if (error instanceof StreamableHTTPError) {
    const status = error.code ?? 0;
    if (status === 401 || status === 403) {
      return fail(
        "mcp_unauthorized",
        `${what} refused the request (HTTP ${status}); check the connection's secret`,
      );
    }
    if (status === 404 || status >= 500 || status < 0) {
      return fail("mcp_server_unavailable", `${what} answered HTTP ${status} (${operation})`);
    }
    return fail("mcp_protocol_error", `${what}: ${error.message}`);
  }
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === "string" ? ` (${cause.code})` : "";
  return fail(
    "mcp_server_unavailable",
    `${what} cannot be reached at ${new URL(server.url).origin}${code}: ${error instanceof Error ? error.message : String(error)}`,
  );
}
