import { agentInputShape } from "../records/input.ts";
import { array, integer, nullable, object, string } from "../shape.ts";

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
  "usage.recorded": object({
    provider: string(),
    model: string(),
    inputTokens: integer(),
    outputTokens: integer(),
  }),
};
