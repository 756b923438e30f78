import { createAnthropic } from "@ai-sdk/anthropic";
import type { ModelFactory } from "../resolver.ts";
import { withRetries } from "./retry.ts";
import { type ProviderConfig, requireKey, setting } from "./settings.ts";

const DEFAULT_BASE_URL = "https://api.anthropic.com";

/** `anthropic/<model>` over the Messages API; key from config or ANTHROPIC_API_KEY. */
export function anthropicProvider(config: ProviderConfig = {}): ModelFactory {
  return (modelName) => {
    const env = config.env ?? process.env;
    const modelId = `anthropic/${modelName}`;
    const apiKey = requireKey(
      setting(config.apiKey, env.ANTHROPIC_API_KEY),
      "ANTHROPIC_API_KEY",
      modelId,
    );
    const baseURL = versioned(setting(config.baseURL, env.ANTHROPIC_BASE_URL) ?? DEFAULT_BASE_URL);
    // Explicit apiKey and baseURL: the SDK must not fall back to process.env on its own.
    const model = createAnthropic({ apiKey, baseURL, headers: config.headers })(modelName);
    return withRetries(model, { ...config.retry, modelId, secrets: [apiKey] });
  };
}

/**
 * Anthropic's own SDK and tools take ANTHROPIC_BASE_URL without `/v1`, the AI SDK wants it with
 * it; both spellings work here.
 */
export function versioned(baseURL: string): string {
  const trimmed = baseURL.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}
