import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { providerToolsOf } from "@opencomputer/runtime";
import { json, startFakeApi } from "@opencomputer/testkit/model-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicProvider } from "../src/providers/anthropic.ts";
import { openaiProvider } from "../src/providers/openai.ts";
import { ollamaProvider } from "../src/providers/openai-compatible.ts";
import { callOptions, fastRetry } from "./prompt.ts";

const ctx = { projectDir: "/tmp", agentId: "a" };
let api: Awaited<ReturnType<typeof startFakeApi>>;

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());

const openai = (config = {}) =>
  openaiProvider({
    env: { OPENAI_API_KEY: "sk-test-key", OPENAI_BASE_URL: `${api.origin}/v1` },
    retry: fastRetry,
    ...config,
  })("gpt-test", ctx);
const anthropic = () =>
  anthropicProvider({
    env: { ANTHROPIC_API_KEY: "sk-ant-test-key", ANTHROPIC_BASE_URL: api.origin },
    retry: fastRetry,
  })("claude-test", ctx);

const chatReply = json(200, {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-test",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const anthropicReply = json(200, {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-test",
  content: [{ type: "text", text: "ok" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});

/** A conversation whose earlier step searched the web at the provider. */
const searched: LanguageModelV3Prompt = [
  { role: "system", content: "Be brief." },
  { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
  {
    role: "assistant",
    content: [
      {
        type: "tool-call",
        toolCallId: "srvtoolu_1",
        toolName: "web-search",
        input: { query: "paris weather" },
        providerExecuted: true,
      },
      {
        type: "tool-result",
        toolCallId: "srvtoolu_1",
        toolName: "web-search",
        output: {
          type: "json",
          value: [
            {
              type: "web_search_result",
              url: "https://weather.example/paris",
              title: "Paris weather",
              pageAge: null,
              encryptedContent: "Eq...",
            },
          ],
        },
      },
      { type: "text", text: "Sunny, 21°C." },
    ],
  },
  { role: "user", content: [{ type: "text", text: "Thanks" }] },
];

describe("which providers serve web-search", () => {
  it("anthropic and openai do (unless configured off); OpenAI-compatible servers do not", () => {
    expect(providerToolsOf(anthropic()).get("web-search")).toEqual({
      type: "provider",
      id: "anthropic.web_search_20250305",
      name: "web-search",
      args: {},
    });
    expect(providerToolsOf(openai()).get("web-search")).toMatchObject({
      id: "openai.web_search",
      name: "web-search",
    });
    expect(providerToolsOf(openai({ webSearch: false })).size).toBe(0);
    expect(providerToolsOf(ollamaProvider()("llama3.2", ctx)).size).toBe(0);
  });
});

describe("OpenAI strict decision", () => {
  it("sends strict: true only for a schema in the strict subset, false otherwise", async () => {
    api.reply(chatReply);
    const before = api.received.length;
    const strictTool = {
      type: "function" as const,
      name: "lookup_order",
      inputSchema: {
        type: "object" as const,
        properties: { orderId: { type: "string" as const } },
        required: ["orderId"],
        additionalProperties: false,
      },
    };
    await openai().doGenerate({ ...callOptions, tools: [...callOptions.tools!, strictTool] });
    const sent = api.received[before]!;
    expect(sent.path).toBe("/v1/chat/completions");
    // `weather` has no additionalProperties: false, so it goes without strict mode.
    expect(
      sent.body.tools.map((t: { function: { name: string; strict?: boolean } }) => t.function),
    ).toEqual([
      expect.objectContaining({ name: "weather", strict: false }),
      expect.objectContaining({ name: "lookup_order", strict: true }),
    ]);
  });
});

describe("a step that does not declare web search", () => {
  it("OpenAI Chat Completions gets the earlier search's text but not its provider blocks", async () => {
    api.reply(chatReply);
    const before = api.received.length;
    await openai().doGenerate({ prompt: searched } satisfies LanguageModelV3CallOptions);
    const messages = api.received[before]!.body.messages;
    expect(messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "Sunny, 21°C." },
      { role: "user", content: "Thanks" },
    ]);
  });

  it("Anthropic gets no server_tool_use without the web_search tool it pairs with", async () => {
    api.reply(anthropicReply);
    const before = api.received.length;
    await anthropic().doGenerate({ prompt: searched });
    const body = api.received[before]!.body;
    expect(body.tools).toBeUndefined();
    expect(body.messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "Sunny, 21°C." }],
    });
  });

  it("while a step that declares it sends them", async () => {
    api.reply(anthropicReply);
    const before = api.received.length;
    const model = anthropic();
    const search = providerToolsOf(model).get("web-search")!;
    await model.doGenerate({ prompt: searched, tools: [search] });
    const content = api.received[before]!.body.messages[1].content;
    expect(content.map((b: { type: string }) => b.type)).toEqual([
      "server_tool_use",
      "web_search_tool_result",
      "text",
    ]);
  });
});
