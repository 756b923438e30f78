// A model step's `usage.recorded`: its tokens as providers bill them, and the cost the model
// resolver's price table gives (ports/model.ts). A provider that does not split cached input
// reports it all as full-rate input.

import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { EventData } from "@opencomputer/protocol";
import { publicModelId } from "../ports/model.ts";
import type { EngineContext } from "./context.ts";
import type { StepOutput } from "./model-stream.ts";

export function usageData(
  ctx: EngineContext,
  model: LanguageModelV3,
  requested: string,
  response: StepOutput,
): EventData<"usage.recorded"> {
  const input = response.usage.inputTokens;
  const total = input.total ?? 0;
  const cacheRead = input.cacheRead ?? 0;
  const cacheWrite = input.cacheWrite ?? 0;
  const tokens = {
    input: input.noCache ?? Math.max(0, total - cacheRead - cacheWrite),
    output: response.usage.outputTokens.total ?? 0,
    cacheRead,
    cacheWrite,
  };
  const cost = ctx.models.price?.(publicModelId(model) ?? requested, tokens) ?? {
    costUsd: null,
    pricing: "unknown" as const,
  };
  return {
    provider: model.provider,
    model: model.modelId,
    inputTokens: total,
    outputTokens: tokens.output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    costUsd: cost.costUsd,
    pricing: cost.pricing,
  };
}
