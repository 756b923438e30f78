import type { EventData, EventType } from "@opencomputer/protocol";
import { describe, expect, it } from "vitest";
import { emptyState, foldEvents, waitingFor } from "../src/fold.ts";
import { renderChange, usageTotal } from "../src/fold-inspect.ts";
import type { SessionEvent } from "../src/types.ts";

let seq = 0;
function ev<T extends EventType>(type: T, data: EventData<T>, turnId = "turn_1"): SessionEvent {
  seq++;
  return {
    seq,
    id: `evt_${seq}`,
    timestamp: `2026-01-01T00:00:${String(seq).padStart(2, "0")}Z`,
    sessionId: "ses_1",
    turnId,
    type,
    data,
  } as SessionEvent;
}

const input = { source: "user" as const, text: "hi" };
const render = (renderId: string, instructions: string, model: string, tools: string[]) =>
  ev("agent.rendered", {
    renderId,
    instructions,
    model,
    enabledTools: tools,
    input,
    renderedAt: "2026-01-01T00:00:00Z",
  });
const billing = { connectionId: "billing", method: "POST", path: "/v1/charges" };

describe("the inspector's fold", () => {
  it("numbers renders in order and tells what changed from the previous one", () => {
    seq = 0;
    const s = foldEvents(emptyState, [
      render("rnd_1", "Be brief.", "script/a", ["lookup", "ask"]),
      render("rnd_2", "Be brief.", "script/a", ["lookup", "ask"]),
      render("rnd_3", "Be brief.\nThe customer is on pro.", "script/b", ["lookup", "refund"]),
    ]);
    expect(s.renders.map((r) => [r.number, r.renderId, r.model])).toEqual([
      [1, "rnd_1", "script/a"],
      [2, "rnd_2", "script/a"],
      [3, "rnd_3", "script/b"],
    ]);
    expect(renderChange(undefined, s.renders[0]!)).toBeNull();
    expect(renderChange(s.renders[0], s.renders[1]!)).toEqual({
      model: null,
      toolsAdded: [],
      toolsRemoved: [],
      instructionsChanged: false,
    });
    expect(renderChange(s.renders[1], s.renders[2]!)).toEqual({
      model: { from: "script/a", to: "script/b" },
      toolsAdded: ["refund"],
      toolsRemoved: ["ask"],
      instructionsChanged: true,
    });
    // Renders are not conversation items.
    expect(s.items).toEqual([]);
  });

  it("pairs each request through a connection with its response or failure", () => {
    seq = 0;
    const events = [
      ev("egress.request", billing),
      ev("egress.request", { ...billing, path: "/v1/refunds" }),
      ev("egress.request", billing),
      ev("egress.response", { ...billing, status: 201, durationMs: 42 }),
      ev("egress.failed", { ...billing, path: "/v1/refunds", message: "connection reset" }),
    ];
    const s = foldEvents(emptyState, events);
    expect(
      s.egress.map((r) => [r.method, r.path, r.state, r.status, r.durationMs, r.message]),
    ).toEqual([
      ["POST", "/v1/charges", "answered", 201, 42, undefined],
      ["POST", "/v1/refunds", "failed", undefined, undefined, "connection reset"],
      ["POST", "/v1/charges", "pending", undefined, undefined, undefined],
    ]);
    expect(s.egress[0]!.at).toBe("2026-01-01T00:00:01Z");
    // Read again from a cursor in the middle (a reload with `after`): the answer stands alone.
    const later = foldEvents({ ...emptyState, cursor: 3 }, events.slice(3));
    expect(later.egress.map((r) => [r.path, r.state, r.status])).toEqual([
      ["/v1/charges", "answered", 201],
      ["/v1/refunds", "failed", undefined],
    ]);
  });

  it("waits for a person on an open question or an approval to decide, not otherwise", () => {
    seq = 0;
    expect(waitingFor(emptyState)).toBeNull();
    const asked = foldEvents(emptyState, [
      ev("question.asked", {
        questionId: "q_1",
        text: "Which?",
        options: [],
        askedAt: "2026-01-01T00:00:00Z",
      }),
    ]);
    expect(waitingFor(asked)).toBe("answer");
    const card = { title: "Move c1" };
    seq = 0;
    const proposed = foldEvents(emptyState, [
      ev("approval.requested", {
        approvalId: "apr_1",
        callId: "call_1",
        tool: "attach",
        input: {},
        card,
        digest: "sha256:x",
      }),
    ]);
    expect(waitingFor(proposed)).toBe("approval");
    const unconfirmed = { ...proposed.approvals[0]!, status: "unconfirmed" as const };
    expect(waitingFor({ question: null, approvals: [unconfirmed] })).toBe("approval");
    const applied = { ...proposed.approvals[0]!, status: "applied" as const };
    expect(waitingFor({ question: null, approvals: [applied] })).toBeNull();
  });
});

describe("usage in the fold", () => {
  const step = (turnId: string, input: number, output: number, costUsd: number | null) =>
    ev(
      "usage.recorded",
      {
        provider: "anthropic",
        model: "claude-sonnet-4.6",
        inputTokens: input,
        outputTokens: output,
        cacheReadTokens: 2,
        cacheWriteTokens: 1,
        costUsd,
        pricing: costUsd === null ? "unknown" : "table",
      },
      turnId,
    );

  it("sums tokens and cost per turn and for the session, counting unpriced steps apart", () => {
    seq = 0;
    const s = foldEvents(emptyState, [
      step("turn_1", 100, 10, 0.1),
      step("turn_1", 200, 20, 0.2),
      step("turn_2", 5, 5, null),
      // An event written before cache and cost fields existed.
      ev(
        "usage.recorded",
        { provider: "x", model: "y", inputTokens: 1, outputTokens: 1 },
        "turn_2",
      ),
    ]);
    expect(s.usage).toEqual([
      {
        turnId: "turn_1",
        steps: 2,
        inputTokens: 300,
        outputTokens: 30,
        cacheReadTokens: 4,
        cacheWriteTokens: 2,
        costUsd: 0.3,
        unpricedSteps: 0,
      },
      {
        turnId: "turn_2",
        steps: 2,
        inputTokens: 6,
        outputTokens: 6,
        cacheReadTokens: 2,
        cacheWriteTokens: 1,
        costUsd: 0,
        unpricedSteps: 2,
      },
    ]);
    expect(usageTotal(s.usage)).toEqual({
      steps: 4,
      inputTokens: 306,
      outputTokens: 36,
      cacheReadTokens: 6,
      cacheWriteTokens: 3,
      costUsd: 0.3,
      unpricedSteps: 2,
    });
  });

  it("keeps what a render attached besides tools", () => {
    seq = 0;
    const s = foldEvents(emptyState, [
      ev("agent.rendered", {
        renderId: "rnd_1",
        instructions: "Help.",
        model: "anthropic/claude-sonnet-4.6",
        modelSource: "default",
        enabledTools: ["docs_search", "subagent_researcher"],
        enabledMcpServers: ["docs"],
        skills: ["triage"],
        enabledSubagents: ["researcher"],
        requiredConnections: ["github"],
        input,
        renderedAt: "2026-01-01T00:00:00Z",
      }),
    ]);
    expect(s.renders[0]).toMatchObject({
      modelSource: "default",
      mcpServers: ["docs"],
      skills: ["triage"],
      subagents: ["researcher"],
      connections: ["github"],
    });
  });
});
