import { createAnthropic } from "@ai-sdk/anthropic";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import { WEB_SEARCH_ID, withProviderTools } from "@opencomputer/runtime";
import type { ModelFactory } from "../resolver.ts";
import { anthropicModelName } from "./anthropic-model-name.ts";
import { declareProviderTool, withoutUndeclaredProviderParts } from "./provider-tool-parts.ts";
import { withRetries } from "./retry.ts";
import { type ProviderConfig, requireKey, setting } from "./settings.ts";

const DEFAULT_BASE_URL = "https://api.anthropic.com";

type WebSearchArgs = NonNullable<
  Parameters<ReturnType<typeof createAnthropic>["tools"]["webSearch_20250305"]>[0]
>;

export interface AnthropicConfig extends ProviderConfig {
  /**
   * Options of Anthropic's server-side web search (`web_search_20250305`), which serves
   * `useTool("web-search")`: maxUses, allowedDomains, blockedDomains, userLocation. `false`
   * takes web search away from agents on this runtime.
   */
  webSearch?: Omit<WebSearchArgs, "execute" | "needsApproval" | "toModelOutput"> | false;
}

/** `anthropic/<model>` over the Messages API; key from config or ANTHROPIC_API_KEY. */
export function anthropicProvider(config: AnthropicConfig = {}): ModelFactory {
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
    const provider = createAnthropic({ apiKey, baseURL, headers: config.headers });
    const model = withRetries(withDeclaredParts(provider(anthropicModelName(modelName))), {
      ...config.retry,
      modelId,
      secrets: [apiKey],
    });
    if (config.webSearch === false) return model;
    // The SDK's own provider tool: its id selects the wire declaration and the parsing of
    // server_tool_use / web_search_tool_result blocks; our name is what events and prompts use.
    const search = provider.tools.webSearch_20250305(config.webSearch ?? {});
    return withProviderTools(model, {
      [WEB_SEARCH_ID]: declareProviderTool(search, WEB_SEARCH_ID),
    });
  };
}

/**
 * Drops server_tool_use / web_search_tool_result blocks from earlier steps when this step does
 * not declare web search: Anthropic pairs those blocks with a declared server tool.
 */
function withDeclaredParts(model: LanguageModelV3): LanguageModelV3 {
  const prepare = <T extends Parameters<LanguageModelV3["doStream"]>[0]>(options: T): T => {
    const declared = new Set(
      (options.tools ?? []).filter((t) => t.type === "provider").map((t) => t.name),
    );
    return { ...options, prompt: withoutUndeclaredProviderParts(options.prompt, declared) };
  };
  return {
    specificationVersion: "v3",
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate: (options) => model.doGenerate(prepare(options)),
    doStream: (options) => model.doStream(prepare(options)),
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
