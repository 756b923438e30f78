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
    /** The model that answers this step: the agent's, the default, or the runtime's override. */
    model: nullable(string()),
    /** What the agent selected with useModel; null when it selected none (the default applies). */
    requestedModel: optional(nullable(string())),
    /** Why `model` is what it is: the agent chose it, the default filled in, or an override won. */
    modelSource: optional(oneOf(["agent", "default", "override"])),
    enabledTools: array(string()),
    /** Ids of the MCP servers the render attached (their tools are in enabledTools). */
    enabledMcpServers: optional(array(string())),
    /** Names of the skills the model was offered with `load_skill`. */
    skills: optional(array(string())),
    /** Agents offered for delegation (`useSubagent`), each as the tool `subagent_<id>`. */
    enabledSubagents: optional(array(string())),
    /** Connections the render asked for (`useConnection`). */
    requiredConnections: optional(array(string())),
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
