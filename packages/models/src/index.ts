// Model providers for the runtime's model port (ModelResolver in @opencomputer/runtime): the
// AI SDK adapters (Anthropic, OpenAI, OpenAI-compatible/Ollama), the scripted model for tests
// and demos, and the resolver that picks one by `provider/model` id.

export {
  checkPrices,
  createPricer,
  type ModelPrice,
  PRICE_TABLE,
  PRICES_AS_OF,
  type Pricer,
} from "./prices.ts";
export {
  type AnthropicConfig,
  anthropicProvider,
  DEFAULT_RETRY,
  defaultProviders,
  type Env,
  isContextOverflow,
  isStrictSchema,
  OLLAMA_BASE_URL,
  type OpenAICompatibleConfig,
  type OpenAIConfig,
  ollamaProvider,
  openaiCompatibleProvider,
  openaiProvider,
  type ProviderConfig,
  type RetryOptions,
  redact,
  STRICT_LIMITS,
  STRICT_STRING_FORMATS,
  type StrictSchemaIssue,
  strictSchemaIssues,
  toProviderError,
  withRetries,
} from "./providers/index.ts";
export {
  createModelResolver,
  type ModelFactory,
  type ModelResolverOptions,
  parseModelId,
} from "./resolver.ts";
export type { Script, ScriptStep, ScriptToolCall } from "./script-file.ts";
export { createScriptModel } from "./script-model.ts";
