import { ModelError } from "@opencomputer/runtime";
import { json, readAll, sse, startFakeApi } from "@opencomputer/testkit/model-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openaiProvider } from "../src/providers/openai.ts";
import { callOptions, fastRetry } from "./prompt.ts";

const KEY = "sk-proj-test-abcdef0123456789";
const ctx = { projectDir: "/tmp", agentId: "a" };
let api: Awaited<ReturnType<typeof startFakeApi>>;

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());

function model() {
  const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${api.origin}/v1` };
  return openaiProvider({ env, retry: fastRetry })("gpt-test", ctx);
}

const chunk = (delta: unknown, finish: string | null = null) => ({
  data: {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-test",
    choices: [{ index: 0, delta, finish_reason: finish }],
  },
});

const streamEvents = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "Checking " }),
  chunk({ content: "Paris." }),
  chunk({
    tool_calls: [
      { index: 0, id: "call_9", type: "function", function: { name: "weather", arguments: "" } },
    ],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
  chunk({}, "tool_calls"),
  {
    data: {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "gpt-test",
      choices: [],
      usage: { prompt_tokens: 51, completion_tokens: 12, total_tokens: 63 },
    },
  },
  { data: "[DONE]" },
];

const openaiError = (message: string, code: string | null, type = "invalid_request_error") => ({
  error: { message, type, param: null, code },
});

describe("openai provider against a local Chat Completions API", () => {
  it("sends bearer key, model, messages with tool results and tool schemas; reads the reply", async () => {
    api.reply(
      json(200, {
        id: "chatcmpl-2",
        object: "chat.completion",
        created: 1,
        model: "gpt-test",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "Checking.",
              tool_calls: [
                {
                  id: "call_2",
                  type: "function",
                  function: { name: "weather", arguments: '{"city":"Paris"}' },
                },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 },
      }),
    );
    const before = api.received.length;
    const result = await model().doGenerate(callOptions);
    const sent = api.received[before]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body.model).toBe("gpt-test");
    expect(sent.body.messages).toMatchObject([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        tool_calls: [
          {
            id: "call_0",
            type: "function",
            function: { name: "weather", arguments: '{"city":"Lyon"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_0", content: '{"tempC":18}' },
    ]);
    expect(sent.body.tools).toMatchObject([
      {
        type: "function",
        function: {
          name: "weather",
          description: "Current weather for a city",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    ]);
    expect(result.content).toMatchObject([
      { type: "text", text: "Checking." },
      { type: "tool-call", toolCallId: "call_2", toolName: "weather", input: '{"city":"Paris"}' },
    ]);
    expect(result.finishReason.unified).toBe("tool-calls");
    expect(result.usage.inputTokens.total).toBe(40);
    expect(result.usage.outputTokens.total).toBe(8);
  });

  it("streams text, assembles tool-call arguments from partial JSON, and reads the usage chunk", async () => {
    api.reply(sse(streamEvents));
    const before = api.received.length;
    const { stream } = await model().doStream(callOptions);
    const parts = await readAll(stream);
    expect(api.received[before]!.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = parts.map((p) => (p.type === "text-delta" ? p.delta : "")).join("");
    expect(text).toBe("Checking Paris.");
    const call = parts.find((p) => p.type === "tool-call");
    expect(call).toMatchObject({ toolCallId: "call_9", toolName: "weather" });
    expect(call?.type === "tool-call" && JSON.parse(call.input)).toEqual({ city: "Paris" });
    const finish = parts.at(-1);
    expect(finish).toMatchObject({
      type: "finish",
      finishReason: { unified: "tool-calls" },
      usage: { inputTokens: { total: 51 }, outputTokens: { total: 12 } },
    });
  });

  it("maps context_length_exceeded to context_too_long", async () => {
    const message =
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.";
    api.reply(json(400, openaiError(message, "context_length_exceeded")));
    await expect(model().doGenerate(callOptions)).rejects.toMatchObject({
      code: "context_too_long",
      status: 400,
    });
  });

  it("maps 400 to model_rejected", async () => {
    api.reply(json(400, openaiError("Invalid schema for function 'weather'", null)));
    const error = await model()
      .doGenerate(callOptions)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: "model_rejected" });
  });

  it("retries a 429 after retry-after-ms, then succeeds", async () => {
    api.reply(
      json(429, openaiError("Rate limit reached", "rate_limit_exceeded", "requests"), {
        "retry-after-ms": "30",
      }),
      sse(streamEvents),
    );
    const before = api.received.length;
    const started = Date.now();
    const { stream } = await model().doStream(callOptions);
    await readAll(stream);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(api.received.length - before).toBe(2);
  });

  it("does not retry a 429 for an exhausted quota", async () => {
    api.reply(json(429, openaiError("You exceeded your current quota", "insufficient_quota")));
    const before = api.received.length;
    await expect(model().doGenerate(callOptions)).rejects.toMatchObject({
      code: "model_unavailable",
    });
    expect(api.received.length - before).toBe(1);
  });

  it("gives up on repeated 500s as model_unavailable", async () => {
    api.reply(json(500, openaiError("The server had an error", null, "server_error")));
    const before = api.received.length;
    await expect(model().doStream(callOptions)).rejects.toMatchObject({
      code: "model_unavailable",
      status: 500,
    });
    expect(api.received.length - before).toBe(4);
  });

  it("errors, not hangs, when the connection drops half-way through the stream", async () => {
    api.reply(sse(streamEvents, 4));
    const { stream } = await model().doStream(callOptions);
    await expect(readAll(stream)).rejects.toBeInstanceOf(ModelError);
  });
});
