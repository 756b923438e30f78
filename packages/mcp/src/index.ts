// Public surface of @opencomputer/mcp: the runtime's MCP client (createRuntime's `mcp` option).

export { createMcpConnector, type McpConnectorOptions } from "./connector.ts";
