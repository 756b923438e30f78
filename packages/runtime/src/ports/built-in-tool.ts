import type { LanguageModelV3ProviderTool } from "@ai-sdk/provider";
import { type JsonSchema, type JsonValue, OpenComputerError } from "@opencomputer/agent";
import { MODEL_PROVIDED_TOOL_IDS } from "./provider-tools.ts";

/** What a runtime-provided tool's `execute` gets for one call. */
export interface BuiltInToolContext {
  /** Already validated against the tool's `input` schema. */
  input: Record<string, unknown>;
  sessionId: string;
  turnId: string;
  toolCallId: string;
  agentId: string;
  signal: AbortSignal;
  reportProgress(metadata: JsonValue): Promise<void>;
}

export type BuiltInResult = { ok: true; output: JsonValue } | { ok: false; message: string };

/**
 * A tool the runtime provides (selected with `useTool("<id>")`), e.g. the computers' `shell`.
 * Unlike an author's tool it runs with the runtime's privileges, so it may hold resources per
 * session; `onSessionEnd` is where it lets them go.
 */
export interface BuiltInTool {
  id: string;
  description: string;
  input: JsonSchema;
  execute(context: BuiltInToolContext): Promise<BuiltInResult>;
  onSessionEnd?(sessionId: string): Promise<void>;
}

/**
 * An agent selected a built-in id its model cannot serve, e.g. `useTool("web-search")` on a
 * model whose provider has no server-side web search. The render accepted the id (the model is
 * only known once the agent has chosen it); the model step refuses it with this error.
 */
export class BuiltInUnavailableError extends OpenComputerError {
  constructor(
    readonly tool: string,
    readonly model: string,
    readonly available: readonly string[],
  ) {
    super(
      "tool_unavailable_for_model",
      `useTool(${JSON.stringify(tool)}): ${model} has no provider-side ${tool}; it runs on the model provider's servers, so use a model that offers it (anthropic/..., openai/...), or stop selecting it for this model. Built-in tools available with ${model}: ${available.join(", ") || "none"}`,
      { path: "useTool", tool, model, available: [...available] },
    );
  }
}

/**
 * The provider tools a step declares for the model-provided ids the render selected (those that
 * are neither the runtime's own tools nor `ask`), or the error naming the first id the model
 * lacks together with every built-in id this model can serve.
 */
export function providerToolsForStep(
  selected: readonly string[],
  runtimeIds: readonly string[],
  ownTools: ReadonlyMap<string, BuiltInTool>,
  served: ReadonlyMap<string, LanguageModelV3ProviderTool>,
  modelId: string,
): LanguageModelV3ProviderTool[] | BuiltInUnavailableError {
  const tools: LanguageModelV3ProviderTool[] = [];
  for (const id of selected) {
    if (ownTools.has(id) || !MODEL_PROVIDED_TOOL_IDS.includes(id)) continue;
    const tool = served.get(id);
    if (!tool) {
      const available = runtimeIds.filter(
        (other) => !MODEL_PROVIDED_TOOL_IDS.includes(other) || served.has(other),
      );
      return new BuiltInUnavailableError(id, modelId, available);
    }
    tools.push(tool);
  }
  return tools;
}
