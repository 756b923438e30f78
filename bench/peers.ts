// The same scenario without the engine: on AI SDK 6 `generateText` with its mock model (in
// memory, nothing durable), and as a bare hand-written loop (the floor: what the work costs
// with no framework at all).
import type { LanguageModelV3GenerateResult, LanguageModelV3Usage } from "@ai-sdk/provider";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import {
  INSTRUCTIONS,
  LOOKUP_ORDER_DESCRIPTION,
  LOOKUP_ORDER_SCHEMA,
  lookupOrder,
  type Scenario,
  USER_TEXT,
} from "./scenario.ts";
import { type LatencySummary, measure } from "./stats.ts";

const USAGE: LanguageModelV3Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/** One AI SDK run: a fresh mock model per run, tools built once outside the loop. */
export function aiSdkRun(scenario: Scenario): () => Promise<void> {
  // Wrapped once, as a real application would, so the schema is not converted on every call.
  const inputSchema = jsonSchema<{ orderId: string }>(LOOKUP_ORDER_SCHEMA);
  const tools = {
    [scenario.toolName]: tool({
      description: LOOKUP_ORDER_DESCRIPTION,
      inputSchema,
      execute: (input) => lookupOrder(input),
    }),
  };
  const firstStep = (): LanguageModelV3GenerateResult => ({
    content: [
      { type: "text", text: scenario.firstText },
      {
        type: "tool-call",
        toolCallId: "call_1",
        toolName: scenario.toolName,
        input: JSON.stringify(scenario.toolInput),
      },
    ],
    finishReason: { unified: "tool-calls", raw: undefined },
    usage: USAGE,
    warnings: [],
  });
  const finalStep = (): LanguageModelV3GenerateResult => ({
    content: [{ type: "text", text: scenario.finalText }],
    finishReason: { unified: "stop", raw: undefined },
    usage: USAGE,
    warnings: [],
  });

  return async () => {
    let calls = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => (calls++ === 0 ? firstStep() : finalStep()),
    });
    const result = await generateText({
      model,
      system: INSTRUCTIONS,
      prompt: USER_TEXT,
      tools,
      stopWhen: stepCountIs(5),
    });
    if (result.text !== scenario.finalText || result.steps.length !== 2) {
      throw new Error(
        `generateText took ${result.steps.length} steps and answered "${result.text}"`,
      );
    }
  };
}

interface BareMessage {
  role: "system" | "user" | "assistant" | "tool";
  text: string;
  calls?: { id: string; name: string; args: string }[];
  callId?: string;
}

/** One bare run: a model that is a function, a tool table, a message array. */
export function bareRun(scenario: Scenario): () => Promise<void> {
  const tools: Record<string, (input: { orderId: string }) => Promise<unknown>> = {
    [scenario.toolName]: lookupOrder,
  };
  async function model(messages: BareMessage[]): Promise<BareMessage> {
    const step = messages.filter((m) => m.role === "assistant").length;
    if (step === 0) {
      const args = JSON.stringify(scenario.toolInput);
      return {
        role: "assistant",
        text: scenario.firstText,
        calls: [{ id: "call_1", name: scenario.toolName, args }],
      };
    }
    return { role: "assistant", text: scenario.finalText };
  }

  return async () => {
    const messages: BareMessage[] = [
      { role: "system", text: INSTRUCTIONS },
      { role: "user", text: USER_TEXT },
    ];
    let answer = "";
    for (let step = 0; step < 5; step++) {
      const reply = await model(messages);
      messages.push(reply);
      if (!reply.calls?.length) {
        answer = reply.text;
        break;
      }
      for (const call of reply.calls) {
        const run = tools[call.name];
        const output = run ? await run(JSON.parse(call.args)) : { error: "unknown tool" };
        messages.push({ role: "tool", callId: call.id, text: JSON.stringify(output) });
      }
    }
    if (answer !== scenario.finalText) throw new Error(`the bare loop answered "${answer}"`);
  };
}

export function benchAiSdk(
  scenario: Scenario,
  opts: { warmup: number; runs: number },
): Promise<LatencySummary> {
  return measure(aiSdkRun(scenario), opts);
}

export function benchBare(
  scenario: Scenario,
  opts: { warmup: number; runs: number },
): Promise<LatencySummary> {
  return measure(bareRun(scenario), opts);
}
