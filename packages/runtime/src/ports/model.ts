// The model port: what the engine needs from models. A model is an AI SDK provider-spec model
// (LanguageModelV3); a ModelResolver turns an agent's `provider/model` id into one. The
// providers, the scripted model and createModelResolver live in @opencomputer/models, which
// depends on this port (never the other way). Failure mapping: model-error.ts; provider-run
// tools (web search): provider-tools.ts.
import type { LanguageModelV3 } from "@ai-sdk/provider";

export interface ModelContext {
  /** The user's project directory (holds `opencomputer/scripts/*.json`). */
  projectDir: string;
  agentId: string;
}

export interface ModelResolver {
  resolve(modelId: string, context: ModelContext): LanguageModelV3;
  /**
   * What a model step cost, from a price table; `costUsd: null` with `pricing: "unknown"` when
   * the table has no price for the model (the runtime never guesses one). Without it every
   * step is `unknown`.
   */
  price?(modelId: string, tokens: StepTokens): StepCost;
}

/** A model step's tokens, split the way providers bill them. */
export interface StepTokens {
  /** Input tokens billed at the full rate (neither read from nor written to a cache). */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface StepCost {
  costUsd: number | null;
  /** Where the price came from: the shipped table, the project's override, free (local), or none. */
  pricing: "table" | "config" | "free" | "unknown";
}

// The `provider/model` id each resolved model answers to, for messages that name the model.
const publicIds = new WeakMap<LanguageModelV3, string>();

/** Records the `provider/model` id a resolver resolved `model` for; returns `model`. */
export function withPublicModelId(model: LanguageModelV3, modelId: string): LanguageModelV3 {
  publicIds.set(model, modelId);
  return model;
}

/** The `provider/model` id a model was resolved for (the override's, when one is set). */
export function publicModelId(model: LanguageModelV3): string | undefined {
  return publicIds.get(model);
}

/**
 * Marks a model whose steps come whole: its stream would hand every part over at once (the
 * scripted model), so streaming it gives no delta and the engine asks `doGenerate` for the same
 * content instead. Why: on Node 20 building a ReadableStream costs about 10 µs, a tenth of an
 * engine run on the scripted model, for nothing.
 */
export const WHOLE_STEPS: unique symbol = Symbol.for("opencomputer.model.wholeSteps");

/** A model marked as one whose steps come whole. */
export type WholeStepsModel = LanguageModelV3 & { readonly [WHOLE_STEPS]: true };

export function hasWholeSteps(model: LanguageModelV3): boolean {
  return (model as LanguageModelV3 & { [WHOLE_STEPS]?: boolean })[WHOLE_STEPS] === true;
}
