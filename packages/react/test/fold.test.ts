import type { EventData, EventType } from "@opencomputer/protocol";
import { describe, expect, it } from "vitest";
import { emptyState, foldEvents, isBusy } from "../src/fold.ts";
import type { SessionEvent } from "../src/types.ts";

let seq = 0;
/** A stored event; its data is typed by the protocol, so the fixtures cannot drift from it. */
function ev<T extends EventType>(type: T, data: EventData<T>, turnId = "turn_1"): SessionEvent {
  seq++;
  return {
    seq,
    id: `evt_${seq}`,
    timestamp: "2026-01-01T00:00:00Z",
    sessionId: "ses_1",
    turnId,
    type,
    data,
  } as SessionEvent;
}

/** An event of a type newer than this client: it must be folded as informational. */
function raw(type: string, data: unknown): SessionEvent {
  seq++;
  const event = { seq, id: `evt_${seq}`, timestamp: "2026-01-01T00:00:00Z", sessionId: "ses_1" };
  return { ...event, type, data } as unknown as SessionEvent;
}

const call = (tool: string, callId: string) => ({ tool, callId, title: tool });
const lookup = call("lookup_order", "call_1");

function log(): SessionEvent[] {
  seq = 0;
  return [
    ev("session.created", { agentId: "a", deploymentId: "d" }, undefined as unknown as string),
    ev("message.received", { input: { source: "user", text: "Where is A1?" }, mode: "queue" }),
    ev("turn.queued", { mode: "queue" }),
    ev("turn.started", {}),
    ev("session.status_changed", { from: "new", to: "running" }),
    ev("message.delta", { messageId: "msg_1", text: "Let me " }),
    ev("message.delta", { messageId: "msg_1", text: "check." }),
    ev("message.completed", { messageId: "msg_1", text: "Let me check." }),
    ev("tool.started", {
      tool: "lookup_order",
      callId: "call_1",
      title: "lookup_order",
      input: { orderId: "A1" },
    }),
    ev("tool.progress", { ...lookup, metadata: { step: 1 } }),
    ev("tool.completed", { ...lookup, output: { status: "shipped" } }),
    ev("usage.recorded", { provider: "script", model: "demo", inputTokens: 1, outputTokens: 1 }),
    raw("some.future_type", { anything: true }),
    ev("turn.completed", { outcome: "completed" }),
    ev("session.status_changed", { from: "running", to: "idle" }),
  ];
}

describe("foldEvents", () => {
  it("builds the conversation: user text, streamed then completed message, tool lifecycle", () => {
    const events = log();
    const mid = foldEvents(emptyState, events.slice(0, 7));
    expect(mid.items.at(-1)).toMatchObject({
      kind: "assistant",
      text: "Let me check.",
      streaming: true,
    });
    expect(isBusy(mid)).toBe(true);
    const s = foldEvents(mid, events.slice(7));
    expect(s.cursor).toBe(15);
    expect(s.messages).toEqual([
      { id: "in:turn_1", role: "user", text: "Where is A1?" },
      { id: "msg_1", role: "assistant", text: "Let me check." },
    ]);
    expect(s.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool"]);
    expect(s.items[2]).toMatchObject({
      status: "completed",
      input: { orderId: "A1" },
      progress: [{ step: 1 }],
      output: { status: "shipped" },
    });
    expect(s.status).toBe("idle");
    expect(isBusy(s)).toBe(false);
  });

  it("folds overlapping and repeated pages once, and is the same whatever the page size", () => {
    const events = log();
    const whole = foldEvents(emptyState, events);
    let paged = emptyState;
    for (let i = 0; i < events.length; i += 3)
      paged = foldEvents(paged, events.slice(Math.max(0, i - 2), i + 3));
    paged = foldEvents(paged, events);
    expect(paged).toEqual(whole);
    expect(foldEvents(whole, events.slice(4, 9))).toBe(whole);
  });

  it("stops at a gap instead of showing events out of order", () => {
    const events = log();
    const s = foldEvents(emptyState, [...events.slice(0, 3), ...events.slice(5)]);
    expect(s.cursor).toBe(3);
    expect(s.gap).toBe(true);
    const healed = foldEvents(s, events.slice(3));
    expect(healed.gap).toBe(false);
    expect(healed).toEqual(foldEvents(emptyState, events));
  });

  it("opens a question with its options and closes it on the answer", () => {
    seq = 0;
    const asked = foldEvents(emptyState, [
      ev("message.received", { input: { source: "user", text: "hi" }, mode: "queue" }),
      ev("tool.started", { ...call("ask", "c_ask"), input: {} }),
      ev("tool.completed", { ...call("ask", "c_ask"), output: {} }),
      ev("question.asked", {
        questionId: "q_1",
        text: "Which?",
        options: [{ label: "A", value: "a" }],
        askedAt: "2026-01-01T00:00:00Z",
      }),
      ev("turn.completed", { outcome: "completed" }),
    ]);
    expect(asked.question).toMatchObject({
      id: "q_1",
      text: "Which?",
      options: [{ label: "A", value: "a" }],
    });
    expect(asked.items.map((i) => i.kind)).toEqual(["user", "question"]);
    const answered = foldEvents(asked, [
      ev("question.answered", { questionId: "q_1", held: 0 }, "turn_2"),
      ev(
        "message.received",
        {
          input: { source: "user", answer: { questionId: "q_1", value: "a", text: "A" } },
          mode: "queue",
        },
        "turn_2",
      ),
    ]);
    expect(answered.question).toBeNull();
    expect(answered.messages.at(-1)).toEqual({ id: "in:turn_2", role: "user", text: "A" });
  });

  it("follows an approval from the card to its outcome, replacing the proposing call's row", () => {
    seq = 0;
    const card = { title: "Move c1", facts: [{ label: "Plan", value: "pro" }] };
    let s = foldEvents(emptyState, [
      ev("tool.started", { ...call("attach", "c1"), input: { customerId: "c1" } }),
      ev("tool.completed", { ...call("attach", "c1"), output: { approvalId: "apr_1" } }),
      ev("approval.requested", {
        approvalId: "apr_1",
        tool: "attach",
        callId: "c1",
        input: {},
        card,
        digest: "sha256:0",
      }),
    ]);
    expect(s.items.map((i) => i.kind)).toEqual(["approval"]);
    expect(s.approvals[0]).toMatchObject({ id: "apr_1", status: "pending", card });
    s = foldEvents(s, [
      ev("approval.decided", {
        approvalId: "apr_1",
        status: "approved",
        decision: { id: "d", decidedAt: "2026-01-01T00:00:00Z", decidedBy: "ana" },
      }),
      ev("approval.applying", { approvalId: "apr_1", attempt: 1, decisionId: "d" }),
      ev("approval.unconfirmed", { approvalId: "apr_1", message: "may have happened" }),
    ]);
    expect(s.approvals[0]).toMatchObject({
      status: "unconfirmed",
      decidedBy: "ana",
      message: "may have happened",
    });
    s = foldEvents(s, [
      ev("approval.retried", { approvalId: "apr_1", decisionId: "d" }),
      ev("approval.applying", { approvalId: "apr_1", attempt: 2, decisionId: "d" }),
      ev("approval.warning", { approvalId: "apr_1", code: "outcome_not_json", message: "w" }),
      ev("approval.applied", { approvalId: "apr_1", outcome: { ok: true } }),
    ]);
    expect(s.approvals[0]).toMatchObject({
      status: "applied",
      attempts: 2,
      outcome: { ok: true },
      warning: "w",
    });
  });

  it("shows failures with their public code and closes a stream the turn abandoned", () => {
    seq = 0;
    const s = foldEvents(emptyState, [
      ev("message.received", { input: { source: "user", text: "go" }, mode: "queue" }),
      ev("turn.started", {}),
      ev("message.delta", { messageId: "m", text: "Work" }),
      ev("tool.started", { ...call("t", "c"), input: {} }),
      ev("tool.failed", {
        ...call("t", "c"),
        message: "The turn failed before t finished",
        settledBy: "turn_failed",
      }),
      ev("turn.failed", { code: "model_unavailable", message: "No model", model: "x/y" }),
    ]);
    expect(s.items.find((i) => i.kind === "assistant")).toMatchObject({ streaming: false });
    expect(s.items.find((i) => i.kind === "tool")).toMatchObject({
      status: "failed",
      settledBy: "turn_failed",
    });
    expect(s.items.at(-1)).toMatchObject({
      kind: "turn",
      status: "failed",
      code: "model_unavailable",
    });
    expect(isBusy(s)).toBe(false);
  });

  it("links a delegation call to its child session and what the child waits for", () => {
    seq = 0;
    const delegate = call("subagent_researcher", "call_9");
    const link = { callId: "call_9", agentId: "researcher", sessionId: "ses_sub_1" };
    const events = [
      ev("tool.started", { ...delegate, input: { task: "Find the audience" } }),
      ev("subagent.started", { ...link, turnId: "turn_c" }),
      ev("subagent.waiting", {
        ...link,
        reason: "question",
        questionId: "q_1",
        text: "Which region?",
        options: [],
      }),
    ];
    const waiting = foldEvents(emptyState, events);
    expect(waiting.items[0]).toMatchObject({
      kind: "tool",
      status: "running",
      subagent: {
        agentId: "researcher",
        sessionId: "ses_sub_1",
        waiting: { reason: "question", questionId: "q_1", text: "Which region?" },
      },
    });
    const done = foldEvents(waiting, [
      ev("tool.completed", { ...delegate, output: { text: "EU developers" } }),
      ev("subagent.completed", link),
    ]);
    const item = done.items[0] as Extract<(typeof done.items)[number], { kind: "tool" }>;
    expect(item.status).toBe("completed");
    expect(item.subagent).toEqual({ agentId: "researcher", sessionId: "ses_sub_1" });
    // A waiting that names no call of this log changes nothing.
    const stray = foldEvents(done, [
      ev("subagent.waiting", { ...link, callId: "call_x", reason: "approval" }),
    ]);
    expect(stray.items).toEqual(done.items);
  });
});
