import { ModelError } from "@opencomputer/runtime";
import { json, startFakeApi } from "@opencomputer/testkit/model-api";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { anthropicProvider, versioned } from "../src/providers/anthropic.ts";
import { defaultProviders } from "../src/providers/defaults.ts";
import { openaiProvider } from "../src/providers/openai.ts";
import { OLLAMA_BASE_URL, openaiCompatibleProvider } from "../src/providers/openai-compatible.ts";
import { createModelResolver } from "../src/resolver.ts";
import { callOptions, fastRetry } from "./prompt.ts";

const ctx = { projectDir: "/tmp", agentId: "a" };
let api: Awaited<ReturnType<typeof startFakeApi>>;

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());

const completionBody = {
  id: "chatcmpl-3",
  object: "chat.completion",
  created: 1,
  model: "llama3.2",
  choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};
const completion = json(200, completionBody);

describe("provider configuration", () => {
  it("a missing key is model_unavailable naming the variable to set", () => {
    const env = { OPENAI_API_KEY: "sk-other-provider-key-123456" };
    const fail = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return error as ModelError;
      }
      throw new Error("expected a ModelError");
    };
    const anthropic = fail(() => anthropicProvider({ env })("claude-x", ctx));
    expect(anthropic).toBeInstanceOf(ModelError);
    expect(anthropic.code).toBe("model_unavailable");
    expect(anthropic.message).toContain("ANTHROPIC_API_KEY");
    expect(anthropic.message).not.toContain(env.OPENAI_API_KEY);
    const openai = fail(() => openaiProvider({ env: { OPENAI_API_KEY: " " } })("gpt-x", ctx));
    expect(openai.message).toContain("OPENAI_API_KEY");
    const gateway = openaiCompatibleProvider({
      name: "gateway",
      baseURL: api.origin,
      apiKeyEnv: "GATEWAY_KEY",
      env: {},
    });
    expect(fail(() => gateway("m", ctx)).message).toContain("GATEWAY_KEY");
  });

  it("accepts ANTHROPIC_BASE_URL with or without /v1", () => {
    expect(versioned("https://proxy.example/")).toBe("https://proxy.example/v1");
    expect(versioned("https://proxy.example/v1")).toBe("https://proxy.example/v1");
  });

  it("config wins over the environment", async () => {
    api.reply(completion);
    const before = api.received.length;
    const env = { OPENAI_API_KEY: "sk-env-key", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" };
    const model = openaiProvider({ env, apiKey: "sk-config-key", baseURL: `${api.origin}/v1` });
    await model("gpt-test", ctx).doGenerate(callOptions);
    expect(api.received[before]!.headers.authorization).toBe("Bearer sk-config-key");
  });

  it("defaultProviders plus script resolve ollama/<model> against a local server, keyless", async () => {
    api.reply(completion);
    const before = api.received.length;
    const env = { OLLAMA_BASE_URL: `${api.origin}/v1` };
    const resolver = createModelResolver({ providers: defaultProviders(env), override: undefined });
    const model = resolver.resolve("ollama/llama3.2", ctx);
    expect(model.modelId).toBe("llama3.2");
    const result = await model.doGenerate(callOptions);
    expect(result.content).toMatchObject([{ type: "text", text: "hi" }]);
    const sent = api.received[before]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.model).toBe("llama3.2");
    expect(Object.keys(defaultProviders({})).sort()).toEqual(["anthropic", "ollama", "openai"]);
  });

  it("a generic OpenAI-compatible provider sends its key from the named variable", async () => {
    api.reply(completion);
    const before = api.received.length;
    const factory = openaiCompatibleProvider({
      name: "gateway",
      baseURL: `${api.origin}/v1`,
      apiKeyEnv: "GATEWAY_KEY",
      env: { GATEWAY_KEY: "gw-key-1" },
      retry: fastRetry,
    });
    await factory("some-model", ctx).doGenerate(callOptions);
    expect(api.received[before]!.headers.authorization).toBe("Bearer gw-key-1");
  });

  it("the ollama preset defaults to 127.0.0.1:11434", async () => {
    // Stub fetch so a real local Ollama, present or not, does not matter.
    const fetch = vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
      return new Response(JSON.stringify(completionBody), {
        headers: { "content-type": "application/json" },
      });
    });
    try {
      await defaultProviders({}).ollama("llama3.2", ctx).doGenerate(callOptions);
      expect(String(fetch.mock.calls[0]![0])).toBe(`${OLLAMA_BASE_URL}/chat/completions`);
      expect(OLLAMA_BASE_URL).toBe("http://127.0.0.1:11434/v1");
    } finally {
      fetch.mockRestore();
    }
  });
});
