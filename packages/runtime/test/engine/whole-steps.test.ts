// The scripted model's steps come whole, so the engine asks doGenerate rather than building a
// stream that would hand everything over at once: the same step, with no delta either way.
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { createScriptModel } from "@opencomputer/models";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { streamStep } from "../../src/engine/model-stream.ts";
import { hasWholeSteps, WHOLE_STEPS } from "../../src/ports/model.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "oc-whole-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "s.json"),
    JSON.stringify({
      steps: [
        {
          reasoning: "look it up",
          text: "Let me check.",
          toolCalls: [
            { name: "lookup_order", input: { orderId: "A1" } },
            { name: "x", inputText: "{" },
          ],
          usage: { inputTokens: 12, outputTokens: 5 },
        },
        { error: { status: 529, message: "overloaded" } },
      ],
    }),
  );
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The model with its calls counted, marked or not. */
function counted(model: LanguageModelV3, whole: boolean) {
  const calls = { generate: 0, stream: 0 };
  const wrapped = {
    ...model,
    [WHOLE_STEPS]: whole,
    doGenerate: (o: LanguageModelV3CallOptions) => {
      calls.generate++;
      return model.doGenerate(o);
    },
    doStream: (o: LanguageModelV3CallOptions) => {
      calls.stream++;
      return model.doStream(o);
    },
  } as LanguageModelV3;
  return { wrapped, calls };
}

const options = (assistantMessages: number): LanguageModelV3CallOptions => ({
  prompt: [
    { role: "user", content: [{ type: "text", text: "Where is A1?" }] },
    ...Array.from({ length: assistantMessages }, () => ({
      role: "assistant" as const,
      content: [{ type: "text" as const, text: "…" }],
    })),
  ],
});

describe("a model whose steps come whole", () => {
  it("is the scripted model, asked with doGenerate for what its stream gives", async () => {
    const model = createScriptModel("s", { projectDir: dir, agentId: "a" } as never);
    expect(hasWholeSteps(model)).toBe(true);
    const whole = counted(model, true);
    const streamed = counted(model, false);
    const deltas: string[] = [];
    const onDelta = async (_kind: string, text: string) => {
      deltas.push(text);
    };
    const a = await streamStep(whole.wrapped, options(0), onDelta);
    const b = await streamStep(streamed.wrapped, options(0), onDelta);
    expect(whole.calls).toEqual({ generate: 1, stream: 0 });
    expect(streamed.calls).toEqual({ generate: 0, stream: 1 });
    expect(a).toStrictEqual(b);
    expect(a.content.map((p) => p.type)).toEqual(["reasoning", "text", "tool-call", "tool-call"]);
    expect(a.usage.inputTokens.total).toBe(12);
    expect(a.finishReason?.unified).toBe("tool-calls");
    expect(deltas).toEqual([]);
  });

  it("fails a step the same way on both paths", async () => {
    const model = createScriptModel("s", { projectDir: dir, agentId: "a" } as never);
    const noDelta = async () => {};
    const whole = await streamStep(counted(model, true).wrapped, options(1), noDelta).catch(
      (e) => e,
    );
    const streamed = await streamStep(counted(model, false).wrapped, options(1), noDelta).catch(
      (e) => e,
    );
    expect(whole).toBeInstanceOf(Error);
    expect(whole.message).toBe("overloaded");
    expect(whole.statusCode).toBe(529);
    expect(streamed.message).toBe(whole.message);
  });
});
