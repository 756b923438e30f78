import { createServer } from "node:net";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { APICallError } from "@ai-sdk/provider";
import { ModelError } from "@opencomputer/runtime";
import { json, sse, startFakeApi } from "@opencomputer/testkit/model-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicProvider } from "../src/providers/anthropic.ts";
import { openaiProvider } from "../src/providers/openai.ts";
import { withRetries } from "../src/providers/retry.ts";
import { callOptions, fastRetry } from "./prompt.ts";

const KEY = "sk-proj-SECRET-0123456789abcdef";
const ctx = { projectDir: "/tmp", agentId: "a" };
let api: Awaited<ReturnType<typeof startFakeApi>>;

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());

function openai(retry: object = fastRetry, baseURL = `${api.origin}/v1`) {
  return openaiProvider({ env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: baseURL }, retry })(
    "gpt-test",
    ctx,
  );
}

const overloaded = (retryAfter: string) =>
  json(
    503,
    { error: { message: "Overloaded", type: "server_error" } },
    { "retry-after": retryAfter },
  );

describe("withRetries", () => {
  it("abort during a retry wait rejects at once and sends nothing more", async () => {
    const controller = new AbortController();
    api.reply((res, req) => {
      overloaded("10")(res, req);
      setTimeout(() => controller.abort(new Error("stopped by test")), 50);
    });
    const before = api.received.length;
    const started = Date.now();
    const error = await openai({ budgetMs: 60_000 })
      .doGenerate({ ...callOptions, abortSignal: controller.signal })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toMatchObject({ message: "stopped by test" });
    expect(api.received.length - before).toBe(1);
  });

  it("abort cancels the request in flight", async () => {
    api.reply(() => {}); // never answers
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await expect(
      openai().doGenerate({ ...callOptions, abortSignal: controller.signal }),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("does not wait for a retry-after longer than the remaining budget", async () => {
    api.reply(overloaded("30"));
    const before = api.received.length;
    const started = Date.now();
    await expect(openai({ budgetMs: 1_000 }).doGenerate(callOptions)).rejects.toMatchObject({
      code: "model_unavailable",
      status: 503,
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(api.received.length - before).toBe(1);
  });

  it("stops retrying when the budget is spent", async () => {
    api.reply(overloaded("0.15"));
    const before = api.received.length;
    const started = Date.now();
    await expect(
      openai({ maxRetries: 10, budgetMs: 400 }).doGenerate(callOptions),
    ).rejects.toBeInstanceOf(ModelError);
    const attempts = api.received.length - before;
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(4);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("retries a refused connection and then reports model_unavailable", async () => {
    const port = await closedPort();
    const error = await openai(fastRetry, `http://127.0.0.1:${port}/v1`)
      .doGenerate(callOptions)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: "model_unavailable" });
  });
});

describe("backoff", () => {
  it("waits with full jitter under an exponential ceiling", async () => {
    const calls: number[] = [];
    const failing = {
      specificationVersion: "v3" as const,
      provider: "fake",
      modelId: "m",
      supportedUrls: {},
      doGenerate: async () => {
        calls.push(Date.now());
        throw new APICallError({
          message: "Service Unavailable",
          url: "http://fake",
          requestBodyValues: {},
          statusCode: 503,
        });
      },
      doStream: async () => {
        throw new Error("unused");
      },
    };
    const model = withRetries(failing, {
      maxRetries: 3,
      baseDelayMs: 40,
      maxDelayMs: 100,
      random: () => 0.5,
    });
    await expect(model.doGenerate(callOptions)).rejects.toMatchObject({
      code: "model_unavailable",
      model: "fake/m",
    });
    // Ceilings 40, 80, 100 (capped) at half: waits of 20, 40, 50 ms.
    const waits = calls.slice(1).map((t, i) => t - calls[i]!);
    expect(waits.length).toBe(3);
    [20, 40, 50].forEach((wait, i) => {
      expect(waits[i]).toBeGreaterThanOrEqual(wait - 2);
      expect(waits[i]).toBeLessThan(wait + 60);
    });
  });
});

describe("errors never carry the API key", () => {
  function expectNoKey(error: unknown) {
    expect(error).toBeInstanceOf(ModelError);
    const e = error as ModelError;
    expect(String(e)).not.toContain(KEY);
    expect(e.message).not.toContain(KEY);
    expect(JSON.stringify(e)).not.toContain(KEY);
    expect(String(e.cause)).not.toContain(KEY);
    expect(JSON.stringify(e.cause)).not.toContain(KEY);
    // OpenAI echoes a masked key; its visible ends are redacted too.
    expect(e.message).not.toMatch(/sk-proj/);
  }

  it("redacts a 401 that echoes the key", async () => {
    api.reply(
      json(401, {
        error: { message: `Incorrect API key provided: ${KEY}.`, type: "invalid_request_error" },
      }),
    );
    const error = await openai()
      .doGenerate(callOptions)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expectNoKey(error);
    expect(error).toMatchObject({ code: "model_rejected", status: 401 });
  });

  it("redacts a masked key echo", async () => {
    api.reply(
      json(401, {
        error: {
          message: "Incorrect API key provided: sk-proj-****cdef.",
          code: "invalid_api_key",
        },
      }),
    );
    expectNoKey(
      await openai()
        .doStream(callOptions)
        .then(
          () => null,
          (e: unknown) => e,
        ),
    );
  });

  it("redacts a 5xx body after retries", async () => {
    api.reply(json(500, { error: { message: `upstream said ${KEY}`, type: "server_error" } }));
    expectNoKey(
      await openai()
        .doGenerate(callOptions)
        .then(
          () => null,
          (e: unknown) => e,
        ),
    );
  });

  it("redacts errors sent inside an Anthropic stream", async () => {
    const key = "sk-ant-SECRET-0123456789";
    api.reply(
      sse([
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
              usage: { input_tokens: 1, output_tokens: 1 },
            },
          },
        },
        {
          event: "error",
          data: { type: "error", error: { type: "overloaded_error", message: `bad ${key}` } },
        },
      ]),
    );
    const env = { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: api.origin };
    const model = anthropicProvider({ env, retry: fastRetry })("claude-test", ctx);
    const { stream } = await model.doStream(callOptions);
    const parts: LanguageModelV3StreamPart[] = [];
    const reader = stream.getReader();
    // The stream errors at its end (no message_stop); the error part comes before that.
    await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        parts.push(value);
      }
    })().catch(() => {});
    const errorPart = parts.find((p) => p.type === "error");
    expect(errorPart?.type === "error" && errorPart.error).toBeInstanceOf(ModelError);
    expect(JSON.stringify(parts)).not.toContain(key);
    expect(String(errorPart?.type === "error" && errorPart.error)).not.toContain(key);
  });
});

/** A port nothing listens on: bind one, then release it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
