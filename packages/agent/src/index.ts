// Public surface of @opencomputer/agent.

export { isTool } from "./brand.ts";
export { defineTool, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from "./define-tool.ts";
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
export type * from "./types.ts";
