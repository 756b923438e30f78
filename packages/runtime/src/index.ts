export type { AgentResolver, LoadedAgent } from "./agents/resolver.ts";
export { AgentNotFoundError, createSourceAgents, parseAgentRef } from "./agents/source-agents.ts";
export { createStaticAgents, type StaticAgentsOptions } from "./agents/static-agents.ts";
export { canonicalJson, jsonDigest } from "./digest.ts";
export { ConflictError, NotFoundError } from "./engine/api-errors.ts";
export type { BuiltInResult, BuiltInTool, BuiltInToolContext } from "./engine/built-in-tool.ts";
export type { ComputerChange } from "./engine/computer-record.ts";
export type { Logger } from "./engine/context.ts";
export { INPUT_LIMITS, InputError } from "./engine/input.ts";
export { RESULT_LIMIT_BYTES } from "./engine/result-commit.ts";
export {
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  type SendTurnOptions,
  type SendTurnResult,
} from "./engine/runtime.ts";
export type { ListSessionsOptions, SessionListRow } from "./engine/session-list.ts";
export type { CreateSessionOptions } from "./engine/session-options.ts";
export { TOOL_OUTPUT_LIMIT_BYTES } from "./engine/tool-call.ts";
export type { SessionView, TurnView } from "./engine/view.ts";
export { newId } from "./ids.ts";
export { ModelError, toModelError } from "./models/model-error.ts";
export {
  anthropicProvider,
  DEFAULT_RETRY,
  defaultProviders,
  type Env,
  isContextOverflow,
  OLLAMA_BASE_URL,
  type OpenAICompatibleConfig,
  ollamaProvider,
  openaiCompatibleProvider,
  openaiProvider,
  type ProviderConfig,
  type RetryOptions,
  redact,
  toProviderError,
  withRetries,
} from "./models/providers/index.ts";
export {
  createModelResolver,
  type ModelContext,
  type ModelFactory,
  type ModelResolver,
  parseModelId,
} from "./models/resolver.ts";
export type { Script, ScriptStep, ScriptToolCall } from "./models/script-file.ts";
export { createScriptModel } from "./models/script-model.ts";
export { StoreError } from "./store/errors.ts";
export type * from "./store/port.ts";
export type * from "./store/records.ts";
