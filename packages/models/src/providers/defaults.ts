import type { ModelFactory } from "../resolver.ts";
import { anthropicProvider } from "./anthropic.ts";
import { openaiProvider } from "./openai.ts";
import { ollamaProvider } from "./openai-compatible.ts";
import type { Env } from "./settings.ts";

/**
 * The providers a runtime offers without configuration. Keys are checked when a model is
 * resolved, so a runtime without ANTHROPIC_API_KEY still starts and fails only turns that use it.
 */
export function defaultProviders(
  env: Env = process.env,
): Record<"anthropic" | "openai" | "ollama", ModelFactory> {
  return {
    anthropic: anthropicProvider({ env }),
    openai: openaiProvider({ env }),
    ollama: ollamaProvider({ env }),
  };
}
