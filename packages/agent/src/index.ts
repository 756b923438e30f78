// Public surface of @opencomputer/agent.

export { isTool } from "./brand.ts";
export { EgressError } from "./connection-fetch.ts";
export {
  CONNECTION_ID_PATTERN,
  type Connection,
  type ConnectionDeclaration,
  type ConnectionDefinition,
  ConnectionDefinitionError,
  connectionDeclaration,
  defineConnection,
  type HeaderValue,
  isConnection,
} from "./define-connection.ts";
export { defineTool, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from "./define-tool.ts";
/** Runtime-internal: the runtime enters it around agent code; agent authors never call it. */
export { type EgressContext, runWithEgress } from "./egress-context.ts";
export { checkEgressPath, type PathCheck } from "./egress-path.ts";
export * as egressWire from "./egress-wire.ts";
export {
  type ErrorDetails,
  JsonCompatibilityError,
  OpenComputerError,
  RenderError,
  ToolDefinitionError,
} from "./errors.ts";
export { useCurrentInput, useInput, useModel, useTool } from "./hooks.ts";
export { assertJsonCompatible, jsonByteLength, MAX_JSON_DEPTH } from "./json-compatible.ts";
export { renderAgent } from "./render.ts";
export {
  bearer,
  isSecretHeader,
  isSecretRef,
  SECRET_NAME_PATTERN,
  type SecretHeader,
  type SecretHeaderDeclaration,
  type SecretRef,
  SecretReferenceError,
  secretHeader,
  useSecret,
} from "./secrets.ts";
export type * from "./types.ts";
