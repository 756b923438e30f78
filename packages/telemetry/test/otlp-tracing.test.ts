// Spans exported over OTLP/HTTP to a receiver in the test process, which decodes them: names and
// GenAI attributes, parents, and one trace per turn across two "processes" (two tracers that
// share nothing), as after a crash and a takeover.

import { type OtlpReceiver, startOtlpReceiver } from "@opencomputer/testkit/otlp-receiver";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOtlpTracing, traceIdOf, tracingConfig, turnSpanIdOf } from "../src/index.ts";

let receiver: OtlpReceiver;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await receiver.close();
});

const turn = {
  sessionId: "ses_1",
  turnId: "turn_abc",
  agentId: "support",
  deploymentId: "dep_0123456789abcdef0123",
};

describe("OTLP tracing", () => {
  it("is off, and costs nothing, without an OTLP endpoint", () => {
    expect(createOtlpTracing({ env: {} })).toBeNull();
    expect(
      tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_SDK_DISABLED: "true" }),
    ).toMatchObject({ enabled: false });
    expect(
      tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x/", OTEL_TRACES_EXPORTER: "otlp" }),
    ).toMatchObject({ enabled: true, url: "http://x/v1/traces" });
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://y/traces" }).url).toBe(
      "http://y/traces",
    );
  });

  it("exports a turn run in two processes as one trace under the turn's span", async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "test-runtime" };
    // The first process runs a step and starts a tool call, then dies (its spans were sent).
    const first = createOtlpTracing({ env })!;
    const run1 = first.turnRun(turn);
    const step = run1.child("step 1", { "opencomputer.step": 1 });
    const chat = step.child("chat claude-sonnet-4.6", {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4.6",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 30,
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });
    chat.end();
    const tool = step.child("execute_tool lookup_order", {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup_order",
      "gen_ai.tool.call.id": "call_1",
    });
    tool.fail("runtime_lost", "The worker stopped");
    tool.end();
    step.end();
    run1.end();
    await first.close();
    // A second process resumes the turn and settles it.
    const second = createOtlpTracing({ env })!;
    const run2 = second.turnRun(turn);
    run2.end();
    second.turnSettled({
      ...turn,
      startedAt: "2026-12-03T10:00:00.000Z",
      settledAt: "2026-12-03T10:00:05.000Z",
      outcome: "completed",
    });
    await second.close();

    expect(receiver.refused).toEqual([]);
    const spans = receiver.spans;
    expect(spans.map((s) => s.name).sort()).toEqual([
      "chat claude-sonnet-4.6",
      "execute_tool lookup_order",
      "invoke_agent support",
      "step 1",
      "turn.run support",
      "turn.run support",
    ]);
    const traceId = traceIdOf(turn.turnId);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceId]));
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const [root] = byName("invoke_agent support");
    expect(root).toMatchObject({
      spanId: turnSpanIdOf(turn.turnId),
      parentSpanId: undefined,
      service: "test-runtime",
      startTimeUnixNano: `${Date.parse("2026-12-03T10:00:00.000Z")}000000`,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        "gen_ai.conversation.id": "ses_1",
        "opencomputer.turn.outcome": "completed",
      },
    });
    for (const run of byName("turn.run support")) expect(run.parentSpanId).toBe(root!.spanId);
    const [stepSpan] = byName("step 1");
    expect(byName("turn.run support").map((s) => s.spanId)).toContain(stepSpan!.parentSpanId);
    expect(byName("chat claude-sonnet-4.6")[0]).toMatchObject({
      parentSpanId: stepSpan!.spanId,
      attributes: {
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.response.finish_reasons": ["tool_calls"],
      },
    });
    expect(byName("execute_tool lookup_order")[0]).toMatchObject({
      parentSpanId: stepSpan!.spanId,
      status: { code: 2, message: "The worker stopped" },
      attributes: { "error.type": "runtime_lost", "gen_ai.tool.call.id": "call_1" },
    });
  });
});
