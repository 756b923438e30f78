import type { LanguageModelV3 } from "@ai-sdk/provider";
import { ModelError } from "./model-error.ts";

export interface ModelContext {
  /** The user's project directory (holds `opencomputer/scripts/*.json`). */
  projectDir: string;
  agentId: string;
}

/** Makes a model for the part after `provider/` of a model id. */
export type ModelFactory = (modelName: string, context: ModelContext) => LanguageModelV3;

export interface ModelResolver {
  resolve(modelId: string, context: ModelContext): LanguageModelV3;
}

export interface ModelResolverOptions {
  providers: Record<string, ModelFactory>;
  /**
   * Replaces every agent's model (e.g. `script/demo`); defaults to `OPENCOMPUTER_MODEL` from the
   * environment. Authors use it to run their agents on a scripted model in tests.
   */
  override?: string | undefined;
}

export function parseModelId(modelId: string): { provider: string; name: string } {
  const slash = modelId.indexOf("/");
  if (slash <= 0 || slash === modelId.length - 1) {
    throw new ModelError(
      "model_unavailable",
      `Model id "${modelId}" is not of the form provider/model`,
      modelId,
    );
  }
  return { provider: modelId.slice(0, slash), name: modelId.slice(slash + 1) };
}

// The `provider/model` id each resolved model answers to, for messages that name the model.
const publicIds = new WeakMap<LanguageModelV3, string>();

/** The `provider/model` id a model was resolved for (the override's, when one is set). */
export function publicModelId(model: LanguageModelV3): string | undefined {
  return publicIds.get(model);
}

/** Resolves `provider/model` ids to provider-spec models; the override wins over the agent's choice. */
export function createModelResolver(options: ModelResolverOptions): ModelResolver {
  const override = "override" in options ? options.override : process.env.OPENCOMPUTER_MODEL;
  const cache = new Map<string, LanguageModelV3>();
  return {
    resolve(requested, context) {
      const modelId = override || requested;
      const key = `${context.projectDir}\0${modelId}`;
      const cached = cache.get(key);
      if (cached) return cached;
      const { provider, name } = parseModelId(modelId);
      const factory = options.providers[provider];
      if (!factory) {
        const known = Object.keys(options.providers).join(", ") || "none";
        throw new ModelError(
          "model_unavailable",
          `No model provider "${provider}" for ${modelId}; configured providers: ${known}`,
          modelId,
        );
      }
      const model = factory(name, context);
      publicIds.set(model, modelId);
      cache.set(key, model);
      return model;
    },
  };
}
