export { type AnthropicConfig, anthropicProvider } from "./anthropic.ts";
export { defaultProviders } from "./defaults.ts";
export { isContextOverflow, redact, toProviderError } from "./errors.ts";
export { type OpenAIConfig, openaiProvider } from "./openai.ts";
export {
  OLLAMA_BASE_URL,
  type OpenAICompatibleConfig,
  ollamaProvider,
  openaiCompatibleProvider,
} from "./openai-compatible.ts";
export { DEFAULT_RETRY, type RetryOptions, withRetries } from "./retry.ts";
export type { Env, ProviderConfig } from "./settings.ts";
export {
  isStrictSchema,
  STRICT_LIMITS,
  STRICT_STRING_FORMATS,
  type StrictSchemaIssue,
  strictSchemaIssues,
} from "./strict-schema.ts";
