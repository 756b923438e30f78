import { fileURLToPath } from "node:url";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import { anthropicProvider, ollamaProvider, openaiProvider } from "@opencomputer/models";
import {
  anthropicFailedSearchStep,
  anthropicFinalStep,
  anthropicPausedStep,
  anthropicSearchStep,
  OPENAI_SEARCH_ID,
  openaiFinalStep,
  openaiSearchStep,
  RESULTS,
  SEARCH_ID,
  sse,
  startFakeApi,
} from "@opencomputer/testkit/model-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BuiltInUnavailableError, providerToolsForStep } from "../../src/ports/built-in-tool.ts";
import { providerToolsOf } from "../../src/ports/provider-tools.ts";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/web-search-agents.ts", import.meta.url));

const ctx = { projectDir: "/tmp", agentId: "a" };
const retry = { maxRetries: 0 };
let api: Awaited<ReturnType<typeof startFakeApi>>;
let h: Harness;

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());
afterEach(async () => {
  await h?.close();
});

const anthropic = (name: string) =>
  anthropicProvider({
    env: { ANTHROPIC_API_KEY: "sk-ant-test-key", ANTHROPIC_BASE_URL: api.origin },
    retry,
  })(name, ctx);
const openai = (name: string) =>
  openaiProvider({
    env: { OPENAI_API_KEY: "sk-test-key", OPENAI_BASE_URL: `${api.origin}/v1` },
    retry,
  })(name, ctx);

describe.each(EXECUTIONS)("web search (%s)", (execution) => {
  const inMode = { agentsModule: AGENTS, execution, workers: TEST_WORKERS };

  describe('useTool("web-search") on Anthropic', () => {
    it("declares web_search_20250305, records the search as provider-executed, and sends it back", async () => {
      h = await harness({
        ...inMode,
        providers: { anthropic },
        model: "anthropic/claude-test",
      });
      api.reply(sse(anthropicSearchStep), sse(anthropicFinalStep), sse(anthropicFinalStep));
      const before = api.received.length;
      const { sessionId, events } = await h.run("Weather in Paris?", "searcher");

      const first = api.received[before]!.body;
      expect(first.tools).toEqual(
        expect.arrayContaining([
          { type: "web_search_20250305", name: "web_search" },
          expect.objectContaining({ name: "lookup" }),
        ]),
      );
      expect(ofType(events, "agent.rendered")[0]!.data.enabledTools).toEqual([
        "lookup",
        "web-search",
      ]);

      const started = ofType(events, "tool.started");
      expect(started.map((e) => e.data.tool)).toEqual(["web-search", "lookup"]);
      expect(started[0]!.data).toEqual({
        tool: "web-search",
        callId: SEARCH_ID,
        title: "web-search",
        input: { query: "paris weather today" },
        providerExecuted: true,
      });
      const completed = ofType(events, "tool.completed");
      expect(completed.map((e) => e.data.tool)).toEqual(["web-search", "lookup"]);
      expect(completed[0]!.data).toEqual({
        tool: "web-search",
        callId: SEARCH_ID,
        title: "web-search",
        output: {
          queries: ["paris weather today"],
          results: [
            { title: "Paris weather forecast", url: "https://weather.example/paris" },
            { title: "Météo Paris", url: "https://meteo.example/paris" },
          ],
        },
        providerExecuted: true,
      });
      // The search and its results are recorded with the step, before the answer that used them.
      const seqOf = (type: string) => events.find((e) => e.type === type)!.seq;
      expect(seqOf("tool.started")).toBeLessThan(seqOf("message.completed"));
      expect(ofType(events, "turn.completed")).toHaveLength(1);

      // Next step: the search goes back as Anthropic's own blocks, encrypted content included.
      const assistantBlocks = (body: { messages: Array<{ role: string; content: unknown }> }) =>
        body.messages
          .filter((m) => m.role === "assistant")
          .flatMap((m) => m.content as Array<Record<string, unknown>>);
      const second = api.received[before + 1]!.body;
      const blocks = assistantBlocks(second);
      expect(blocks).toContainEqual({
        type: "server_tool_use",
        id: SEARCH_ID,
        name: "web_search",
        input: { query: "paris weather today" },
      });
      expect(blocks).toContainEqual({
        type: "web_search_tool_result",
        tool_use_id: SEARCH_ID,
        content: RESULTS.map(({ type, title, url, encrypted_content, page_age }) => ({
          url,
          title,
          page_age,
          encrypted_content,
          type,
        })),
      });
      const types = blocks.map((b) => b.type);
      expect(types.indexOf("web_search_tool_result")).toBeLessThan(types.indexOf("tool_use"));

      // A later turn rebuilds the conversation from the store: the search survives that too.
      const { turnId } = await h.runtime.sessions.sendTurn(sessionId, { text: "And tomorrow?" });
      await h.runtime.sessions.waitForTurn(sessionId, turnId, { timeoutMs: 20_000 });
      const third = assistantBlocks(api.received[before + 2]!.body);
      expect(third.filter((b) => b.type === "web_search_tool_result")).toHaveLength(1);
      expect(third.find((b) => b.type === "server_tool_use")).toMatchObject({ id: SEARCH_ID });
    });

    it("records a search the provider could not run as tool.failed with its error code", async () => {
      h = await harness({
        ...inMode,
        providers: { anthropic },
        model: "anthropic/claude-test",
      });
      api.reply(sse(anthropicFailedSearchStep));
      const { events } = await h.run("Search a lot", "searcher");
      const failed = ofType(events, "tool.failed");
      expect(failed).toHaveLength(1);
      expect(failed[0]!.data).toMatchObject({
        tool: "web-search",
        callId: "srvtoolu_failed",
        providerExecuted: true,
      });
      expect(String(failed[0]!.data.message)).toContain("max_uses_exceeded");
      expect(ofType(events, "turn.completed")).toHaveLength(1);
    });
  });

  describe("Anthropic pause_turn", () => {
    it("is not the end of the turn: the paused content goes back and the model resumes", async () => {
      h = await harness({
        ...inMode,
        providers: { anthropic },
        model: "anthropic/claude-test",
      });
      api.reply(sse(anthropicPausedStep), sse(anthropicFinalStep));
      const before = api.received.length;
      const { events } = await h.run("Weather in Paris?", "searcher");
      expect(api.received.length - before).toBe(2);
      const resumed = api.received[before + 1]!.body.messages.at(-1);
      expect(resumed.role).toBe("assistant");
      expect(resumed.content.map((b: { type: string }) => b.type)).toEqual([
        "server_tool_use",
        "web_search_tool_result",
      ]);
      expect(ofType(events, "tool.completed").map((e) => e.data.tool)).toEqual(["web-search"]);
      expect(ofType(events, "agent.rendered")).toHaveLength(2);
      expect(ofType(events, "turn.completed")).toHaveLength(1);
      expect(ofType(events, "message.completed").at(-1)!.data.text).toBe("Sunny in Paris.");
    });
  });

  describe('useTool("web-search") on OpenAI', () => {
    it("uses the Responses API without storage, strict function tools, and sends the search back", async () => {
      h = await harness({ ...inMode, providers: { openai }, model: "openai/gpt-test" });
      api.reply(sse(openaiSearchStep), sse(openaiFinalStep));
      const before = api.received.length;
      const { events } = await h.run("Weather in Paris?", "searcher");

      const first = api.received[before]!;
      expect(first.path).toBe("/v1/responses");
      expect(first.body.store).toBe(false);
      expect(first.body.tools).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: "web_search" }),
          expect.objectContaining({ type: "function", name: "lookup", strict: true }),
        ]),
      );

      const completed = ofType(events, "tool.completed");
      expect(completed.map((e) => e.data.tool)).toEqual(["web-search", "lookup"]);
      expect(completed[0]!.data).toEqual({
        tool: "web-search",
        callId: OPENAI_SEARCH_ID,
        title: "web-search",
        // OpenAI's results carry URLs only; the title comes from the answer's url_citation.
        output: {
          queries: ["paris weather today"],
          results: [{ title: "Paris weather forecast", url: "https://weather.example/paris" }],
        },
        providerExecuted: true,
      });
      expect(ofType(events, "turn.completed")).toHaveLength(1);

      const second = api.received[before + 1]!;
      expect(second.path).toBe("/v1/responses");
      const items = second.body.input as Array<Record<string, unknown>>;
      expect(items).toContainEqual({
        type: "web_search_call",
        id: OPENAI_SEARCH_ID,
        status: "completed",
        action: {
          type: "search",
          query: "paris weather today",
          sources: [{ type: "url", url: "https://weather.example/paris" }],
        },
      });
      const call = items.find((i) => i.type === "function_call");
      expect(call).toMatchObject({ name: "lookup" });
      expect(items).toContainEqual(
        expect.objectContaining({ type: "function_call_output", call_id: call!.call_id }),
      );
    });
  });

  describe("on the scripted model", () => {
    it("plays a step's webSearch as a provider's search: events, message content, answer", async () => {
      h = await harness({
        ...inMode,
        steps: [
          {
            webSearch: [
              {
                query: "paris weather today",
                results: [{ title: "Paris forecast", url: "https://weather.example/paris" }],
              },
              { query: "paris rain", error: "max_uses_exceeded" },
            ],
            text: "Sunny in Paris today.",
          },
        ],
      });
      const { sessionId, events } = await h.run("Weather in Paris?", "searcher");
      expect(ofType(events, "turn.completed")).toHaveLength(1);
      const started = ofType(events, "tool.started");
      expect(started.map((e) => e.data)).toEqual([
        {
          tool: "web-search",
          callId: "script_search_0_0",
          title: "web-search",
          input: { query: "paris weather today" },
          providerExecuted: true,
        },
        expect.objectContaining({ callId: "script_search_0_1", input: { query: "paris rain" } }),
      ]);
      expect(ofType(events, "tool.completed")[0]!.data).toMatchObject({
        tool: "web-search",
        output: {
          queries: ["paris weather today"],
          results: [{ title: "Paris forecast", url: "https://weather.example/paris" }],
        },
        providerExecuted: true,
      });
      expect(ofType(events, "tool.failed")[0]!.data.message).toBe(
        "web-search failed at the model provider: max_uses_exceeded",
      );
      expect(ofType(events, "message.completed")[0]!.data.text).toBe("Sunny in Paris today.");
      // No tool-call record: nothing was left for the runtime to run.
      expect(await h.store.listToolCalls(sessionId)).toEqual([]);
    });

    it("refuses a search in a step whose agent did not select web-search", async () => {
      h = await harness({
        ...inMode,
        steps: [{ webSearch: [{ query: "x", results: [] }], text: "no" }],
      });
      const { events } = await h.run("Hi", "quiet");
      expect(ofType(events, "turn.failed")[0]!.data).toMatchObject({ code: "model_rejected" });
      expect(ofType(events, "tool.started")).toHaveLength(0);
    });
  });

  describe("selecting web-search where the model has none", () => {
    const ollama = (name: string) =>
      ollamaProvider({ baseURL: "http://127.0.0.1:9/v1" })(name, ctx);
    it.each<[string, Record<string, (name: string) => LanguageModelV3>]>([
      ["ollama/llama3.2", { ollama }],
    ])(
      "fails the turn on %s with a typed error listing the built-ins it has",
      async (model, providers) => {
        h = await harness({ ...inMode, providers, model });
        const { events } = await h.run("Weather in Paris?", "searcher");
        const failed = ofType(events, "turn.failed");
        expect(failed).toHaveLength(1);
        expect(failed[0]!.data).toMatchObject({ code: "agent_failed", tool: "web-search" });
        expect(String(failed[0]!.data.message)).toContain(
          `${model} has no provider-side web-search`,
        );
        expect(String(failed[0]!.data.message)).toContain(
          `Built-in tools available with ${model}: ask`,
        );
        expect(String(failed[0]!.data.message)).not.toContain("ask, web-search");
        expect(ofType(events, "tool.started")).toHaveLength(0);
      },
    );

    it("an unknown built-in id fails the render with the ids this runtime has", async () => {
      h = await harness({ ...inMode });
      const { events } = await h.run("Go", "fetcher");
      const failed = ofType(events, "turn.failed");
      expect(failed[0]!.data).toMatchObject({ code: "agent_failed" });
      expect(String(failed[0]!.data.message)).toContain(
        'no built-in tool "web-fetch"; available built-in tools: ask, web-search',
      );
    });
  });
});

describe("providerToolsForStep", () => {
  it("the error is an OpenComputerError with code, path and the available ids", () => {
    const served = providerToolsOf(anthropic("claude-test"));
    expect([...served.keys()]).toEqual(["web-search"]);
    expect(
      providerToolsForStep(["web-search"], ["ask", "web-search"], new Map(), served, "x/y"),
    ).toEqual([served.get("web-search")]);
    const error = providerToolsForStep(
      ["ask", "web-search"],
      ["ask", "web-search", "shell"],
      new Map(),
      new Map(),
      "ollama/llama3.2",
    );
    expect(error).toBeInstanceOf(BuiltInUnavailableError);
    expect(error).toMatchObject({
      code: "tool_unavailable_for_model",
      details: {
        path: "useTool",
        tool: "web-search",
        model: "ollama/llama3.2",
        available: ["ask", "shell"],
      },
    });
  });
});
