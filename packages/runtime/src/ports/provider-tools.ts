import type { LanguageModelV3, LanguageModelV3ProviderTool } from "@ai-sdk/provider";

/**
 * Built-in tool ids that a model provider runs on its own servers (`useTool("web-search")`).
 * The runtime never executes them: it declares the provider's tool and records what the
 * provider reports it did.
 */
export const WEB_SEARCH_ID = "web-search";
export const MODEL_PROVIDED_TOOL_IDS: readonly string[] = [WEB_SEARCH_ID];

/**
 * Which built-in ids a model serves, kept beside the model object rather than on it: models are
 * AI SDK objects, and the engine only needs a lookup by identity.
 */
const registry = new WeakMap<LanguageModelV3, ReadonlyMap<string, LanguageModelV3ProviderTool>>();

/** Declares that `model` serves these built-in ids with these provider tools; returns `model`. */
export function withProviderTools(
  model: LanguageModelV3,
  tools: Record<string, LanguageModelV3ProviderTool>,
): LanguageModelV3 {
  registry.set(model, new Map(Object.entries(tools)));
  return model;
}

/** The provider tools a model serves, by built-in id (empty for a model without any). */
const NONE: ReadonlyMap<string, LanguageModelV3ProviderTool> = new Map();

export function providerToolsOf(
  model: LanguageModelV3,
): ReadonlyMap<string, LanguageModelV3ProviderTool> {
  return registry.get(model) ?? NONE;
}

export interface WebSearchSummary {
  queries: string[];
  results: Array<{ title: string | null; url: string }>;
}

/**
 * What a provider's web search did, in one shape for events whatever the provider: the queries
 * and the results' titles and URLs. Anthropic returns results with titles (and opaque
 * encrypted content, kept only in the conversation); OpenAI returns the query and source URLs,
 * whose titles arrive as citations (`sources`) of the answer.
 */
export function summarizeWebSearch(
  input: unknown,
  result: unknown,
  sources: ReadonlyArray<{ sourceType: string; url?: string; title?: string }>,
): WebSearchSummary {
  const queries: string[] = [];
  const results: WebSearchSummary["results"] = [];
  const titleOf = (url: string) =>
    sources.find((s) => s.sourceType === "url" && s.url === url)?.title ?? null;
  const inputQuery = (input as { query?: unknown } | null)?.query;
  if (typeof inputQuery === "string") queries.push(inputQuery);
  if (Array.isArray(result)) {
    for (const item of result as Array<{ url?: unknown; title?: unknown }>) {
      if (typeof item?.url !== "string") continue;
      const title = typeof item.title === "string" ? item.title : titleOf(item.url);
      results.push({ title, url: item.url });
    }
  } else if (typeof result === "object" && result !== null) {
    const { action, sources: found } = result as {
      action?: { type?: string; query?: unknown; queries?: unknown; url?: unknown };
      sources?: Array<{ type?: string; url?: unknown }>;
    };
    const asked = Array.isArray(action?.queries) ? action.queries : [action?.query];
    for (const q of asked) if (typeof q === "string" && !queries.includes(q)) queries.push(q);
    for (const source of found ?? []) {
      if (source?.type === "url" && typeof source.url === "string") {
        results.push({ title: titleOf(source.url), url: source.url });
      }
    }
    if (results.length === 0 && typeof action?.url === "string") {
      results.push({ title: titleOf(action.url), url: action.url });
    }
  }
  return { queries, results };
}
