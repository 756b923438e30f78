// Public surface of @opencomputer/agent: what an agent author writes agents, tools and
// connections with. The runtime's plumbing is in @opencomputer/agent/internal.

export { EgressError } from "./connection-fetch.ts";
export { type ConnectionRef, connection, useConnection } from "./connection-ref.ts";
export {
  type Connection,
  type ConnectionDefinition,
  ConnectionDefinitionError,
  defineConnection,
  type HeaderValue,
} from "./define-connection.ts";
export {
  defineMcpServer,
  MCP_SERVER_ID_PATTERN,
  type McpServer,
  type McpServerDeclaration,
  type McpServerDefinition,
  McpServerDefinitionError,
} from "./define-mcp-server.ts";
export {
  type DocumentMemoryProvider,
  defineMemory,
  documentMemory,
  type HttpMemoryOptions,
  type HttpMemoryProvider,
  type HttpMemoryTool,
  type HttpMemoryToolDefinition,
  httpMemory,
  type Memory,
  type MemoryDefinition,
  MemoryDefinitionError,
  type MemoryProvider,
} from "./define-memory.ts";
export {
  defineSchedule,
  type ScheduleDeclaration,
  type ScheduleDefinition,
  ScheduleDefinitionError,
} from "./define-schedule.ts";
export { defineTool, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from "./define-tool.ts";
export {
  type ErrorDetails,
  JsonCompatibilityError,
  OpenComputerError,
  ToolDefinitionError,
} from "./errors.ts";
export { useCurrentInput, useInput, useMcpServer, useModel, useTool } from "./hooks.ts";
export { MAX_JSON_DEPTH } from "./json-compatible.ts";
export {
  bearer,
  type SecretHeader,
  type SecretRef,
  SecretReferenceError,
  secretHeader,
  useSecret,
} from "./secrets.ts";
export { useSessionData } from "./session-data.ts";
export type * from "./types.ts";
export { type MemoryProjection, type MemorySource, useMemory } from "./use-memory.ts";
export { useSubagent } from "./use-subagent.ts";
