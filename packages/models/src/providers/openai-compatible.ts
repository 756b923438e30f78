import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { ModelFactory } from "../resolver.ts";
import { withRetries } from "./retry.ts";
import { type ProviderConfig, requireKey, setting } from "./settings.ts";

export interface OpenAICompatibleConfig extends ProviderConfig {
  /** The provider part of model ids, e.g. `ollama` for `ollama/llama3.2`. */
  name: string;
  baseURL: string;
  /** A variable to read the key from when `apiKey` is not given; then the key is required. */
  apiKeyEnv?: string;
}

/** Any server speaking OpenAI Chat Completions (Ollama, vLLM, llama.cpp, LM Studio, gateways). */
export function openaiCompatibleProvider(config: OpenAICompatibleConfig): ModelFactory {
  return (modelName) => {
    const env = config.env ?? process.env;
    const modelId = `${config.name}/${modelName}`;
    let apiKey = setting(config.apiKey);
    if (!apiKey && config.apiKeyEnv) {
      apiKey = requireKey(setting(env[config.apiKeyEnv]), config.apiKeyEnv, modelId);
    }
    const provider = createOpenAICompatible({
      name: config.name,
      baseURL: config.baseURL,
      apiKey,
      headers: config.headers,
      includeUsage: true, // ask for the final usage chunk when streaming
    });
    return withRetries(provider.chatModel(modelName), {
      ...config.retry,
      modelId,
      secrets: apiKey ? [apiKey] : [],
    });
  };
}

export const OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1";

/** `ollama/<model>` on a local Ollama; OLLAMA_BASE_URL or config moves it elsewhere. */
export function ollamaProvider(config: Partial<OpenAICompatibleConfig> = {}): ModelFactory {
  const env = config.env ?? process.env;
  return openaiCompatibleProvider({
    ...config,
    name: config.name ?? "ollama",
    baseURL: setting(config.baseURL, env.OLLAMA_BASE_URL) ?? OLLAMA_BASE_URL,
  });
}
