import { createOpenAI } from "@ai-sdk/openai";
import type { ModelFactory } from "../resolver.ts";
import { withRetries } from "./retry.ts";
import { type ProviderConfig, requireKey, setting } from "./settings.ts";

const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * `openai/<model>` over Chat Completions (`POST /chat/completions`). The SDK's default would be
 * the Responses API; Chat Completions is used because it keeps no conversation state at OpenAI
 * and is the same wire format as every OpenAI-compatible server.
 */
export function openaiProvider(config: ProviderConfig = {}): ModelFactory {
  return (modelName) => {
    const env = config.env ?? process.env;
    const modelId = `openai/${modelName}`;
    const apiKey = requireKey(
      setting(config.apiKey, env.OPENAI_API_KEY),
      "OPENAI_API_KEY",
      modelId,
    );
    const baseURL = setting(config.baseURL, env.OPENAI_BASE_URL) ?? DEFAULT_BASE_URL;
    const model = createOpenAI({ apiKey, baseURL, headers: config.headers }).chat(modelName);
    return withRetries(model, { ...config.retry, modelId, secrets: [apiKey] });
  };
}
