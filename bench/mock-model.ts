// The AI SDK's own mock model (`MockLanguageModelV3`, the one the ai-sdk peer runs on) as the
// engine's model, for the `engine-mock` benchmark: both sides of that ratio then pay for the same
// model, and what differs is the framework around it. The scripted model the `engine` benchmark
// uses reads (and `stat`s) its file on every step, as authors' tests need; this one keeps the
// scenario's two steps in memory.
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { createModelResolver } from "@opencomputer/models";
import type { ModelResolver } from "@opencomputer/runtime";
import { MockLanguageModelV3 } from "ai/test";
import type { Scenario } from "./scenario.ts";

const USAGE: LanguageModelV3Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/** The model id agents are given (`override`): provider `mock`. */
export const MOCK_MODEL = "mock/scenario";

/** The parts of step `step` (0: text and the tool call, 1: the final text), streamed whole. */
function stepParts(scenario: Scenario, step: number): LanguageModelV3StreamPart[] {
  const first = step === 0;
  const parts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "text" },
    { type: "text-delta", id: "text", delta: first ? scenario.firstText : scenario.finalText },
    { type: "text-end", id: "text" },
  ];
  if (first) {
    parts.push({
      type: "tool-call",
      toolCallId: "call_1",
      toolName: scenario.toolName,
      input: JSON.stringify(scenario.toolInput),
    });
  }
  parts.push({
    type: "finish",
    usage: USAGE,
    finishReason: { unified: first ? "tool-calls" : "stop", raw: undefined },
  });
  return parts;
}

/**
 * Resolves every agent's model to a new `MockLanguageModelV3` that answers like the scenario's
 * script: the step is the number of assistant messages in the prompt, the scripted model's rule.
 */
export function mockModels(scenario: Scenario): ModelResolver {
  const model = () =>
    new MockLanguageModelV3({
      doStream: async (options: LanguageModelV3CallOptions) => {
        const step = options.prompt.filter((m) => m.role === "assistant").length;
        if (step > 1) throw new Error(`the scenario has two steps; step ${step + 1} was asked for`);
        const parts = stepParts(scenario, step);
        const stream = new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        });
        return { stream };
      },
    });
  return createModelResolver({ providers: { mock: model }, override: MOCK_MODEL });
}
