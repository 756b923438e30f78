// The scripted model's stand-in for a provider's web search: a step's `webSearch` entries come
// back as the provider-executed call and result parts a real provider (Anthropic) reports, so
// an agent that selects `useTool("web-search")` runs offline and the engine records the search
// exactly as it records a real one (tool.started / tool.completed marked providerExecuted).

import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3ProviderTool,
} from "@ai-sdk/provider";
import { ModelError, WEB_SEARCH_ID } from "@opencomputer/runtime";
import type { ScriptStep } from "./script-file.ts";

/** What the scripted model declares it serves `web-search` with. */
export const SCRIPT_WEB_SEARCH: LanguageModelV3ProviderTool = {
  type: "provider",
  id: "script.web_search",
  name: WEB_SEARCH_ID,
  args: {},
};

/**
 * A real provider only searches when the step declares its search tool; a script that searches
 * in a step whose agent did not select `web-search` would test something that cannot happen.
 */
export function checkSearchDeclared(
  step: ScriptStep,
  options: LanguageModelV3CallOptions,
  modelId: string,
  index: number,
): void {
  if (!step.webSearch?.length) return;
  const declared = options.tools?.some((t) => t.type === "provider" && t.name === WEB_SEARCH_ID);
  if (declared) return;
  throw new ModelError(
    "model_rejected",
    `${modelId}: step ${index + 1} searches the web, but the agent did not select useTool("${WEB_SEARCH_ID}") for this step`,
    modelId,
    400,
  );
}

/** The provider-executed call and result parts of a step's searches, in order. */
export function searchParts(step: ScriptStep, stepIndex: number): LanguageModelV3Content[] {
  const parts: LanguageModelV3Content[] = [];
  step.webSearch?.forEach((search, i) => {
    const toolCallId = `script_search_${stepIndex}_${i}`;
    parts.push({
      type: "tool-call",
      toolCallId,
      toolName: WEB_SEARCH_ID,
      input: JSON.stringify({ query: search.query }),
      providerExecuted: true,
    });
    parts.push(
      search.error === undefined
        ? {
            type: "tool-result",
            toolCallId,
            toolName: WEB_SEARCH_ID,
            result: (search.results ?? []).map((r) => ({
              type: "web_search_result",
              url: r.url,
              title: r.title ?? null,
            })),
          }
        : {
            type: "tool-result",
            toolCallId,
            toolName: WEB_SEARCH_ID,
            result: { type: "web_search_tool_result_error", errorCode: search.error },
            isError: true,
          },
    );
  });
  return parts;
}
