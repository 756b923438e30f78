import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { ModelError } from "@opencomputer/runtime";
import { json, readAll, sse, startFakeApi } from "@opencomputer/testkit/model-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicProvider } from "../src/providers/anthropic.ts";
import { anthropicModelName } from "../src/providers/anthropic-model-name.ts";
import { callOptions, fastRetry } from "./prompt.ts";

const KEY = "sk-ant-test-0123456789abcdef";
const ctx = { projectDir: "/tmp", agentId: "a" };
let api: Awaited<ReturnType<typeof startFakeApi>>;

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());

function model(retry = fastRetry) {
  // Base URL without /v1, the way Anthropic's own tools spell ANTHROPIC_BASE_URL.
  const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: api.origin };
  return anthropicProvider({ env, retry })("claude-test", ctx);
}

const streamEvents = [
  {
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 42, output_tokens: 1 },
      },
    },
  },
  {
    event: "content_block_start",
    data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  },
  {
    event: "content_block_delta",
    data: {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "Checking " },
    },
  },
  {
    event: "content_block_delta",
    data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Paris." } },
  },
  { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
  {
    event: "content_block_start",
    data: {
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "toolu_1", name: "weather", input: {} },
    },
  },
  {
    event: "content_block_delta",
    data: {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"ci' },
    },
  },
  {
    event: "content_block_delta",
    data: {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: 'ty": "Paris"}' },
    },
  },
  { event: "content_block_stop", data: { type: "content_block_stop", index: 1 } },
  {
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 17 },
    },
  },
  { event: "message_stop", data: { type: "message_stop" } },
];

const anthropicError = (type: string, message: string) => ({
  type: "error",
  error: { type, message },
});

describe("anthropic provider against a local Messages API", () => {
  it("sends key, version, model, tool results and tool schemas; reads text, tool calls, usage", async () => {
    api.reply(
      json(200, {
        id: "msg_2",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_2", name: "weather", input: { city: "Paris" } },
        ],
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 30, output_tokens: 9 },
      }),
    );
    const before = api.received.length;
    const result = await model().doGenerate(callOptions);
    const sent = api.received[before]!;
    expect(sent.method).toBe("POST");
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe(KEY);
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent.body.model).toBe("claude-test");
    expect(sent.body.max_tokens).toBeGreaterThan(0);
    expect(JSON.stringify(sent.body.system)).toContain("Be brief.");
    expect(sent.body.messages).toMatchObject([
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "call_0", name: "weather", input: { city: "Lyon" } }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_0" }] },
    ]);
    expect(JSON.stringify(sent.body.messages[2].content[0].content)).toContain("tempC");
    expect(sent.body.tools).toEqual([
      {
        name: "weather",
        description: "Current weather for a city",
        input_schema:
          callOptions.tools![0]!.type === "function" && callOptions.tools![0]!.inputSchema,
      },
    ]);

    expect(result.content).toMatchObject([
      { type: "text", text: "Checking." },
      { type: "tool-call", toolCallId: "toolu_2", toolName: "weather" },
    ]);
    const call = result.content[1]!;
    expect(call.type === "tool-call" && JSON.parse(call.input)).toEqual({ city: "Paris" });
    expect(result.finishReason.unified).toBe("tool-calls");
    expect(result.usage.inputTokens.total).toBe(30);
    expect(result.usage.outputTokens.total).toBe(9);
  });

  it("streams text deltas, assembles the tool call from partial JSON, and reports usage", async () => {
    api.reply(sse(streamEvents));
    const before = api.received.length;
    const { stream } = await model().doStream(callOptions);
    const parts = await readAll(stream);
    expect(api.received[before]!.body.stream).toBe(true);
    const text = parts
      .filter((p): p is Extract<LanguageModelV3StreamPart, { type: "text-delta" }> => {
        return p.type === "text-delta";
      })
      .map((p) => p.delta)
      .join("");
    expect(text).toBe("Checking Paris.");
    const call = parts.find((p) => p.type === "tool-call");
    expect(call).toMatchObject({ toolCallId: "toolu_1", toolName: "weather" });
    expect(call?.type === "tool-call" && JSON.parse(call.input)).toEqual({ city: "Paris" });
    const finish = parts.at(-1);
    expect(finish?.type).toBe("finish");
    if (finish?.type !== "finish") return;
    expect(finish.finishReason.unified).toBe("tool-calls");
    expect(finish.usage.inputTokens.total).toBe(42);
    expect(finish.usage.outputTokens.total).toBe(17);
  });

  it("maps 400 to model_rejected without retrying", async () => {
    api.reply(json(400, anthropicError("invalid_request_error", "tools.0.name: bad name")));
    const before = api.received.length;
    const error = await model()
      .doGenerate(callOptions)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: "model_rejected", status: 400 });
    expect(api.received.length - before).toBe(1);
  });

  it("maps 'prompt is too long' to context_too_long", async () => {
    const message = "prompt is too long: 210000 tokens > 200000 maximum";
    api.reply(json(400, anthropicError("invalid_request_error", message)));
    await expect(model().doGenerate(callOptions)).rejects.toMatchObject({
      code: "context_too_long",
    });
  });

  it("retries 529 overloaded and gives up as model_unavailable", async () => {
    api.reply(json(529, anthropicError("overloaded_error", "Overloaded")));
    const before = api.received.length;
    await expect(model().doGenerate(callOptions)).rejects.toMatchObject({
      code: "model_unavailable",
      status: 529,
    });
    expect(api.received.length - before).toBe(4); // first try + maxRetries
  });

  it("retries a 429 after its retry-after and then succeeds", async () => {
    api.reply(
      json(429, anthropicError("rate_limit_error", "Rate limited"), { "retry-after": "0" }),
      sse(streamEvents),
    );
    const before = api.received.length;
    const { stream } = await model().doStream(callOptions);
    const parts = await readAll(stream);
    expect(parts.at(-1)?.type).toBe("finish");
    expect(api.received.length - before).toBe(2);
  });

  it("errors, not hangs, when the stream is cut half-way", async () => {
    api.reply(sse(streamEvents, 4));
    const { stream } = await model().doStream(callOptions);
    const error = await readAll(stream).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: "model_unavailable" });
  });

  it("errors when the stream ends cleanly before message_stop", async () => {
    api.reply(sse(streamEvents.slice(0, 3)));
    const { stream } = await model().doStream(callOptions);
    await expect(readAll(stream)).rejects.toMatchObject({
      code: "model_unavailable",
      message: expect.stringContaining("ended its response before finishing"),
    });
  });
});

describe("model names as the platform's docs write them", () => {
  it("sends anthropic/claude-sonnet-4.6 as Anthropic's claude-sonnet-4-6", async () => {
    api.reply(
      json(200, {
        id: "msg_9",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-6",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: api.origin };
    const before = api.received.length;
    await anthropicProvider({ env, retry: fastRetry })("claude-sonnet-4.6", ctx).doGenerate(
      callOptions,
    );
    expect(api.received[before]!.body.model).toBe("claude-sonnet-4-6");
  });

  it("leaves native and other names as written", () => {
    expect(anthropicModelName("claude-sonnet-4-6")).toBe("claude-sonnet-4-6");
    expect(anthropicModelName("claude-3.5-sonnet")).toBe("claude-3-5-sonnet");
    expect(anthropicModelName("my-proxy-model-1.2")).toBe("my-proxy-model-1.2");
  });
});
