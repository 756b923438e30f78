import type { LanguageModelV3 } from "@ai-sdk/provider";
import {
  type ModelContext,
  ModelError,
  type ModelResolver,
  withPublicModelId,
} from "@opencomputer/runtime";
import { createPricer, type Pricer } from "./prices.ts";

/** Makes a model for the part after `provider/` of a model id. */
export type ModelFactory = (modelName: string, context: ModelContext) => LanguageModelV3;

export interface ModelResolverOptions {
  providers: Record<string, ModelFactory>;
  /**
   * Replaces every agent's model (e.g. `script/demo`); defaults to `OPENCOMPUTER_MODEL` from the
   * environment. Authors use it to run their agents on a scripted model in tests.
   */
  override?: string | undefined;
  /** Prices steps (`usage.recorded` costUsd); default: the shipped table (prices.ts). */
  pricer?: Pricer;
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

/** Resolves `provider/model` ids to provider-spec models; the override wins over the agent's choice. */
export function createModelResolver(options: ModelResolverOptions): ModelResolver {
  const override = "override" in options ? options.override : process.env.OPENCOMPUTER_MODEL;
  const cache = new Map<string, LanguageModelV3>();
  const pricer = options.pricer ?? createPricer();
  return {
    price: (modelId, tokens) => pricer(modelId, tokens),
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
      const model = withPublicModelId(factory(name, context), modelId);
      cache.set(key, model);
      return model;
    },
  };
}
