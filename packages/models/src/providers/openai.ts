import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { WEB_SEARCH_ID, withProviderTools } from "@opencomputer/runtime";
import type { ModelFactory } from "../resolver.ts";
import { declareProviderTool, withoutUndeclaredProviderParts } from "./provider-tool-parts.ts";
import { withRetries } from "./retry.ts";
import { type ProviderConfig, requireKey, setting } from "./settings.ts";
import { isStrictSchema } from "./strict-schema.ts";

const DEFAULT_BASE_URL = "https://api.openai.com/v1";

type WebSearchArgs = NonNullable<
  Parameters<ReturnType<typeof createOpenAI>["tools"]["webSearch"]>[0]
>;

export interface OpenAIConfig extends ProviderConfig {
  /**
   * Options of OpenAI's server-side web search (the Responses API's `web_search` tool), which
   * serves `useTool("web-search")`: searchContextSize, userLocation, filters. `false` takes web
   * search away from agents on this runtime.
   */
  webSearch?: Omit<WebSearchArgs, "execute" | "needsApproval" | "toModelOutput"> | false;
}

/**
 * `openai/<model>` over Chat Completions (`POST /chat/completions`). The SDK's default would be
 * the Responses API; Chat Completions is used because it keeps no conversation state at OpenAI
 * and is the same wire format as every OpenAI-compatible server.
 *
 * A step that selects `useTool("web-search")` goes to the Responses API instead (with
 * `store: false`, so OpenAI still keeps nothing): Chat Completions has no web search tool, only
 * separate search models that cannot call functions at the same time.
 *
 * Every function tool is sent with an explicit `strict`: true when its input schema fits
 * OpenAI's strict subset (strict-schema.ts), false otherwise. Explicit, because the Responses
 * API treats an omitted `strict` as true and would refuse a schema outside the subset.
 */
export function openaiProvider(config: OpenAIConfig = {}): ModelFactory {
  return (modelName) => {
    const env = config.env ?? process.env;
    const modelId = `openai/${modelName}`;
    const apiKey = requireKey(
      setting(config.apiKey, env.OPENAI_API_KEY),
      "OPENAI_API_KEY",
      modelId,
    );
    const baseURL = setting(config.baseURL, env.OPENAI_BASE_URL) ?? DEFAULT_BASE_URL;
    const provider = createOpenAI({ apiKey, baseURL, headers: config.headers });
    const search =
      config.webSearch === false
        ? undefined
        : declareProviderTool(provider.tools.webSearch(config.webSearch ?? {}), WEB_SEARCH_ID);
    const model = withRetries(
      routed(provider.chat(modelName), provider.responses(modelName), search?.id),
      { ...config.retry, modelId, secrets: [apiKey] },
    );
    return search ? withProviderTools(model, { [WEB_SEARCH_ID]: search }) : model;
  };
}

/** Chat Completions, or the Responses API for a step that declares OpenAI's web search. */
function routed(
  chat: LanguageModelV3,
  responses: LanguageModelV3,
  searchId: string | undefined,
): LanguageModelV3 {
  const route = (
    options: LanguageModelV3CallOptions,
  ): { model: LanguageModelV3; options: LanguageModelV3CallOptions } => {
    const tools = options.tools?.map((tool) =>
      tool.type === "function"
        ? { ...tool, strict: tool.strict ?? strictFor(tool.inputSchema) }
        : tool,
    );
    if (searchId && tools?.some((t) => t.type === "provider" && t.id === searchId)) {
      const openai = { store: false, ...options.providerOptions?.openai };
      return {
        model: responses,
        options: { ...options, tools, providerOptions: { ...options.providerOptions, openai } },
      };
    }
    // Chat Completions has no server tools: earlier web searches stay in the assistant's text.
    const prompt = withoutUndeclaredProviderParts(options.prompt, new Set());
    return { model: chat, options: { ...options, tools, prompt } };
  };
  return {
    specificationVersion: "v3",
    provider: chat.provider,
    modelId: chat.modelId,
    get supportedUrls() {
      return chat.supportedUrls;
    },
    doGenerate(options) {
      const next = route(options);
      return next.model.doGenerate(next.options);
    },
    doStream(options) {
      const next = route(options);
      return next.model.doStream(next.options);
    },
  };
}

// Tool schemas are the same objects step after step; check each once.
const strictCache = new WeakMap<object, boolean>();

function strictFor(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  let strict = strictCache.get(schema);
  if (strict === undefined) {
    strict = isStrictSchema(schema);
    strictCache.set(schema, strict);
  }
  return strict;
}
