export {
  AgentCode,
  type RenderRef,
  WORKER_KEPT_RENDERS,
} from "./agents/agent-code.ts";
export { createInProcessExecution } from "./agents/in-process.ts";
export { locatedAgents } from "./agents/located.ts";
export { AgentNotFoundError, createSourceAgents, parseAgentRef } from "./agents/source-agents.ts";
export { createStaticAgents, type StaticAgentsOptions } from "./agents/static-agents.ts";
export { isoNow } from "./clock.ts";
export { canonicalJson, jsonDigest } from "./digest.ts";
export { ConflictError, NotFoundError } from "./engine/api-errors.ts";
export { ASK_ID } from "./engine/ask.ts";
export type { ComputerChange } from "./engine/computer-record.ts";
export type { EgressGrant, EgressRequest, EgressSource, Logger } from "./engine/context.ts";
export { INPUT_LIMITS, InputError } from "./engine/input.ts";
export {
  budgetsFor,
  checkLabelBudgets,
  type LabelBudget,
  type LabelBudgetOptions,
  periodOf,
} from "./engine/label-budgets.ts";
export { mcpToolName } from "./engine/mcp-names.ts";
export { MCP_MAX_TOOLS_PER_SERVER } from "./engine/mcp-turn.ts";
export type { MemoryApi, MemoryScopeRef } from "./engine/memory-api.ts";
export {
  HTTP_MEMORY_LIMITS,
  type HttpMemorySettings,
  MemoryProviderError,
} from "./engine/memory-http.ts";
export { Notifier } from "./engine/notifier.ts";
export { RESULT_LIMIT_BYTES } from "./engine/result-commit.ts";
export {
  createRuntime,
  type ExecutionOption,
  type RuntimeOptions,
} from "./engine/runtime.ts";
export type {
  ApprovalDecisionInput,
  ApprovalsApi,
  CreateSessionResult,
  LabelChange,
  ResultPage,
  ResultsOptions,
  Runtime,
  SendTurnOptions,
  SendTurnResult,
  SessionPage,
  SessionsApi,
  WaitForTurnOptions,
} from "./engine/runtime-api.ts";
export type { McpOptions } from "./engine/runtime-options.ts";
export type { ListSessionsOptions, SessionListRow } from "./engine/session-list.ts";
export { type CreateSessionOptions, PROJECT_ID } from "./engine/session-options.ts";
export {
  DEFAULT_MODEL,
  DefaultModelUnavailableError,
  type ModelSource,
} from "./engine/step-model.ts";
export { TOOL_OUTPUT_LIMIT_BYTES } from "./engine/tool-call.ts";
export {
  parseGroupBy,
  parseUsageWindow,
  USAGE_DEFAULT_DAYS,
  USAGE_MAX_DAYS,
  type UsageWindow,
  type UsageWindowInput,
} from "./engine/usage-query.ts";
export type { SessionView, TurnView } from "./engine/view.ts";
export { newId } from "./ids.ts";
export {
  type AgentExecution,
  type AgentHandle,
  type CodeOutcome,
  type Egress,
  type ExecutionMode,
  type RenderedAgent,
  type ToolDescriptor,
  WorkerLostError,
} from "./ports/agent-execution.ts";
export type { AgentLocation, AgentResolver, LoadedAgent } from "./ports/agent-resolver.ts";
export type {
  AgentResources,
  SkillFile,
  SkillLibrary,
  SkillSummary,
} from "./ports/agent-resources.ts";
export type { BuiltInResult, BuiltInTool, BuiltInToolContext } from "./ports/built-in-tool.ts";
export type * from "./ports/delivery-store.ts";
export {
  MCP_FAILURE_CODES,
  type McpCallOptions,
  type McpCallOutcome,
  type McpConnector,
  McpError,
  type McpFailureCode,
  type McpOperationOptions,
  type McpServerDeclaration,
  type McpSession,
  type McpToolInfo,
} from "./ports/mcp.ts";
export * as memoryErrors from "./ports/memory-errors.ts";
export { MEMORY_ERROR_STATUS, MemoryError } from "./ports/memory-errors.ts";
export * as memoryRules from "./ports/memory-rules.ts";
export type * from "./ports/memory-store.ts";
export {
  hasWholeSteps,
  type ModelContext,
  type ModelResolver,
  publicModelId,
  type StepCost,
  type StepTokens,
  WHOLE_STEPS,
  type WholeStepsModel,
  withPublicModelId,
} from "./ports/model.ts";
export { ModelError, type ModelFailureCode, toModelError } from "./ports/model-error.ts";
export {
  MODEL_PROVIDED_TOOL_IDS,
  providerToolsOf,
  summarizeWebSearch,
  WEB_SEARCH_ID,
  type WebSearchSummary,
  withProviderTools,
} from "./ports/provider-tools.ts";
export type * from "./ports/records.ts";
export type * from "./ports/store.ts";
export { StoreError } from "./ports/store-errors.ts";
export {
  NO_SPAN,
  NO_TRACING,
  type SettledTurn,
  type SpanAttributes,
  type SpanHandle,
  type TraceTurn,
  type Tracing,
} from "./ports/tracing.ts";
export type * from "./ports/trigger-store.ts";
export type * from "./ports/usage-store.ts";
export {
  queuesWork,
  type SessionSignal,
  SignalFanout,
  type SignalListener,
  type WorkSignal,
} from "./ports/work-signal.ts";
