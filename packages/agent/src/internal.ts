// @opencomputer/agent/internal: what the runtime, the build and the egress gateway use to run
// agent code (render it, enter its egress context, read its declarations). Agent authors never
// call these; the main entry keeps only what they write agents with. Both entries share the
// same modules, and the state hooks and brands need lives in globalThis slots (two copies of the
// SDK still agree, see two-copies.test.ts).

export { isTool } from "./brand.ts";
export { fetchThroughGateway } from "./connection-fetch.ts";
export { isConnectionRef } from "./connection-ref.ts";
export {
  CONNECTION_ID_PATTERN,
  type ConnectionDeclaration,
  connectionDeclaration,
  isConnection,
} from "./define-connection.ts";
export {
  type CollectedMcpServer,
  collectMcpServers,
  isMcpServer,
  mcpServerDeclaration,
} from "./define-mcp-server.ts";
export {
  isMemory,
  type MemoryDeclaration,
  memoryDeclaration,
} from "./define-memory.ts";
export {
  isTimeZone,
  SCHEDULE_ID_PATTERN,
  type ScheduleIssue,
  scheduleDeclaration,
  scheduleIssues,
} from "./define-schedule.ts";
export { describeValue } from "./describe-value.ts";
export { type EgressContext, runWithEgress } from "./egress-context.ts";
export { checkEgressPath, type PathCheck } from "./egress-path.ts";
export * as egressWire from "./egress-wire.ts";
export { RenderError } from "./errors.ts";
export { assertJsonCompatible, jsonByteLength, MAX_JSON_DEPTH } from "./json-compatible.ts";
export {
  MEMORY_DOCUMENT_ID_PATTERN,
  MEMORY_HTTP_TOOL_PATTERN,
  MEMORY_LIMITS,
  MEMORY_RESOURCE_ID_PATTERN,
  utf8Bytes,
} from "./memory-limits.ts";
export { renderAgent } from "./render.ts";
export { LOAD_SKILL_TOOL, MCP_TOOL_PREFIX, reservedToolName } from "./reserved-names.ts";
export {
  isSecretHeader,
  isSecretRef,
  SECRET_NAME_PATTERN,
  type SecretHeaderDeclaration,
} from "./secrets.ts";
export { SUBAGENT_ID_PATTERN, subagentToolName } from "./use-subagent.ts";
