// A runtime with tracing on, running a turn with a tool call on the scripted model: the spans it
// exports over OTLP (turn, run, steps, model calls, the tool call), in one trace, with GenAI
// attributes; no tool input or output unless the operator opts in.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents, type Runtime } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { type OtlpReceiver, startOtlpReceiver } from "@opencomputer/testkit/otlp-receiver";
import { afterEach, describe, expect, it } from "vitest";
import { createOtlpTracing, traceIdOf, turnSpanIdOf } from "../src/index.ts";

const lookup = defineTool({
  name: "lookup_order",
  description: "Look up an order",
  input: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
  async run({ input }) {
    return { orderId: input.orderId, status: "shipped" };
  },
});

let receiver: OtlpReceiver | undefined;
let runtime: Runtime | undefined;
let dir: string | undefined;
afterEach(async () => {
  await runtime?.close();
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function runOneTurn(env: Record<string, string>) {
  receiver = await startOtlpReceiver();
  dir = mkdtempSync(join(tmpdir(), "oc-trace-"));
  mkdirSync(join(dir, "opencomputer/scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer/scripts/trace.json"),
    JSON.stringify({
      steps: [
        {
          toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }],
          usage: { inputTokens: 50, outputTokens: 7 },
        },
        { text: "A1 has shipped." },
      ],
    }),
  );
  const tracing = createOtlpTracing({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env },
  })!;
  runtime = createRuntime({
    store: createSqliteStore({ path: ":memory:" }),
    agents: createStaticAgents({
      projectDir: dir,
      agents: {
        support() {
          useModel("script/trace");
          useTool(lookup);
          return "Help with orders.";
        },
      },
    }),
    models: createModelResolver({ providers: { script: createScriptModel } }),
    tracing,
  });
  await runtime.start();
  const { session } = await runtime.sessions.create({ agentId: "support" });
  const { turnId } = await runtime.sessions.sendTurn(session.id, { text: "Where is A1?" });
  await runtime.sessions.waitForTurn(session.id, turnId);
  await runtime.close();
  runtime = undefined;
  await tracing.close();
  return { spans: receiver.spans, turnId, sessionId: session.id };
}

describe("a turn's spans", () => {
  it("are one trace: the turn, this process's run, steps, model calls and the tool call", async () => {
    const { spans, turnId, sessionId } = await runOneTurn({});
    const names = spans.map((s) => s.name).sort();
    expect(names).toEqual([
      "chat script/trace",
      "chat script/trace",
      "execute_tool lookup_order",
      "invoke_agent support",
      "step 1",
      "step 2",
      "turn.run support",
    ]);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(turnId)]));
    const one = (name: string) => spans.find((s) => s.name === name)!;
    expect(one("invoke_agent support")).toMatchObject({
      spanId: turnSpanIdOf(turnId),
      parentSpanId: undefined,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": sessionId,
        "opencomputer.turn.outcome": "completed",
      },
    });
    expect(one("turn.run support").parentSpanId).toBe(turnSpanIdOf(turnId));
    const steps = spans.filter((s) => s.name.startsWith("step "));
    for (const step of steps) expect(step.parentSpanId).toBe(one("turn.run support").spanId);
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    expect(chats.map((c) => c.parentSpanId).sort()).toEqual(steps.map((s) => s.spanId).sort());
    expect(chats.find((c) => c.parentSpanId === one("step 1").spanId)?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "script",
      "gen_ai.request.model": "script/trace",
      "gen_ai.usage.input_tokens": 50,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.response.finish_reasons": ["tool-calls"],
    });
    const tool = one("execute_tool lookup_order");
    expect(tool.parentSpanId).toBe(one("step 1").spanId);
    expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "lookup_order" });
    // No content by default: the tool's input and output stay out of the trace.
    expect(JSON.stringify(spans)).not.toContain("A1");
  });

  it("carries tool input and output when the operator opts in", async () => {
    const { spans } = await runOneTurn({
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
    });
    const tool = spans.find((s) => s.name === "execute_tool lookup_order")!;
    expect(tool.attributes["gen_ai.tool.call.arguments"]).toBe('{"orderId":"A1"}');
    expect(tool.attributes["gen_ai.tool.call.result"]).toContain("shipped");
  });
});
