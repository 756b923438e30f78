// Streamed answers, in both execution modes: the agent is in fixtures/streaming-agents.ts.

import { fileURLToPath } from "node:url";
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { afterEach, describe, expect, it } from "vitest";
import {
  EXECUTIONS,
  type Harness,
  type HarnessOptions,
  harness,
  ofType,
  TEST_WORKERS,
} from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/streaming-agents.ts", import.meta.url));

const usage = {
  inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 30, text: 30, reasoning: 0 },
};

/** A model that streams its answer word by word, `gapMs` apart, as a real provider does. */
function slowModel(words: string[], gapMs: number, reasoning?: string): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: "slow",
    modelId: "slow/words",
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error("the engine streams")),
    async doStream() {
      const parts: LanguageModelV3StreamPart[] = [];
      if (reasoning) parts.push({ type: "reasoning-delta", id: "r", delta: reasoning });
      for (const w of words) parts.push({ type: "text-delta", id: "t", delta: w });
      parts.push({ type: "finish", usage, finishReason: { unified: "stop", raw: undefined } });
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          async start(controller) {
            for (const part of parts) {
              controller.enqueue(part);
              if (part.type === "text-delta") await new Promise((r) => setTimeout(r, gapMs));
            }
            controller.close();
          },
        }),
      };
    },
  };
}

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe.each(EXECUTIONS)("streamed answers (%s)", (execution) => {
  const start = (options: HarnessOptions) =>
    harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, ...options });

  it("become coalesced message.delta events, then message.completed with the whole text", async () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i} `);
    h = await start({
      model: "slow/words",
      providers: { slow: () => slowModel(words, 10, "thinking…") },
    });
    const { events } = await h.run("go");
    const deltas = ofType(events, "message.delta");
    // ~300 ms of streaming in 50 ms windows: a handful of rows, not one per word.
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.length).toBeLessThan(words.length / 2);
    const completed = ofType(events, "message.completed")[0]!;
    expect(completed.data.text).toBe(words.join(""));
    expect(words.join("").startsWith(deltas.map((d) => d.data.text).join(""))).toBe(true);
    expect(deltas.every((d) => d.data.messageId === completed.data.messageId)).toBe(true);
    // The render is logged before anything the model said.
    const rendered = ofType(events, "agent.rendered")[0]!;
    expect(rendered.seq).toBeLessThan(deltas[0]!.seq);
    expect(ofType(events, "reasoning.delta")[0]!.data.text).toBe("thinking…");
    expect(ofType(events, "reasoning.completed")[0]!.data.text).toBe("thinking…");
    expect(ofType(events, "usage.recorded")[0]!.data).toMatchObject({
      inputTokens: 12,
      outputTokens: 30,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      // No price for a model the table does not know: said so, not guessed.
      costUsd: null,
      pricing: "unknown",
    });
  });

  it("writes no delta rows for an answer that arrives at once", async () => {
    h = await start({
      model: "slow/words",
      providers: { slow: () => slowModel(["all ", "at ", "once"], 0) },
    });
    const { events } = await h.run("go");
    expect(ofType(events, "message.delta")).toHaveLength(0);
    expect(ofType(events, "message.completed")[0]!.data.text).toBe("all at once");
  });
});
