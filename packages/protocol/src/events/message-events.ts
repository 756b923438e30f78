import { agentInputShape } from "../records/input.ts";
import { array, integer, nullable, number, object, oneOf, optional, string } from "../shape.ts";

const text = () => object({ messageId: string(), text: string() });

/** What the model said and how it was asked: one render and one usage record per model step. */
export const messageEvents = {
  /** Streamed text since the previous delta of the same message. */
  "message.delta": text(),
  "message.completed": text(),
  "reasoning.delta": text(),
  "reasoning.completed": text(),
  "agent.rendered": object({
    renderId: string(),
    instructions: string(),
    model: nullable(string()),
    enabledTools: array(string()),
    input: agentInputShape,
    renderedAt: string(),
  }),
  /**
   * One model step's tokens and what it cost. `inputTokens` counts every input token (cached
   * ones too); `costUsd` is null when `pricing` is `unknown` (no price for the model). The
   * cache fields and the cost are absent from events written before they existed.
   */
  "usage.recorded": object({
    provider: string(),
    model: string(),
    inputTokens: integer(),
    outputTokens: integer(),
    cacheReadTokens: optional(integer()),
    cacheWriteTokens: optional(integer()),
    costUsd: optional(nullable(number())),
    pricing: optional(oneOf(["table", "config", "free", "unknown"])),
  }),
};
