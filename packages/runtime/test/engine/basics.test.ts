// The engine's basics. "a turn" runs in both execution modes with the agent of
// fixtures/basics-agents.ts; listing and labels exercise the session API, not agent code, so
// they run in-process only.

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { support } from "./fixtures/basics-agents.ts";
import { clearMarks, marks } from "./fixtures/marks.ts";
import {
  EXECUTIONS,
  type Harness,
  type HarnessOptions,
  harness,
  ofType,
  TEST_WORKERS,
  types,
} from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/basics-agents.ts", import.meta.url));

let h: Harness;
const open: Harness[] = [];
afterEach(async () => {
  for (const done of open.splice(0)) {
    for (const session of await done.store.listSessions({ limit: 100 })) clearMarks(session.id);
    await done.close();
  }
});

describe.each(EXECUTIONS)("a turn (%s)", (execution) => {
  const start = async (options: HarnessOptions) => {
    const started = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      ...options,
    });
    open.push(started);
    return started;
  };

  it("runs model step → tool → model step and commits every event in order", async () => {
    h = await start({
      steps: [
        { text: "Let me look.", toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }] },
        { text: "A1 is processing." },
      ],
    });
    const { sessionId, events } = await h.run("Where is A1?");
    expect(types(events)).toEqual([
      "session.created",
      "message.received",
      "turn.queued",
      "turn.started",
      "session.status_changed",
      "agent.rendered",
      "message.completed",
      "usage.recorded",
      "tool.started",
      "tool.progress",
      "tool.completed",
      "agent.rendered",
      "message.completed",
      "usage.recorded",
      "turn.completed",
      "session.status_changed",
    ]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const completed = ofType(events, "tool.completed")[0]!;
    expect(completed.data).toMatchObject({
      tool: "lookup_order",
      output: { orderId: "A1", status: "processing" },
    });
    expect(completed.data.result).toBeUndefined();
    expect(ofType(events, "tool.progress")[0]!.data.metadata).toEqual({ phase: "looking" });
    const session = await h.runtime.sessions.get(sessionId);
    expect(session.status).toBe("idle");
    expect(session.turns.map((t) => t.status)).toEqual(["completed"]);
  });

  it("gives run() the full context the seed documents", async () => {
    h = await start({
      steps: [
        { toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }] },
        { text: "done" },
      ],
    });
    const { sessionId, events } = await h.run("A1?");
    const ctx = JSON.parse(marks(sessionId, "lookup_order.ctx")[0]!) as Record<string, unknown>;
    const started = ofType(events, "tool.started")[0]!;
    const assistant = (await h.store.listMessages(sessionId)).find((m) => m.role === "assistant")!;
    expect(ctx.input).toEqual({ orderId: "A1" });
    expect(ctx.sessionId).toBe(sessionId);
    expect(ctx.toolCallId).toBe(started.data.callId);
    expect(ctx.messageId).toBe(assistant.id);
    expect(ctx.agentId).toBe("support");
    expect(ctx.signal).toBe("AbortSignal");
    expect(ctx.reportProgress).toBe("function");
  });

  it("gives each call a toolCallId unique within the session", async () => {
    h = await start({
      steps: [
        {
          toolCalls: [
            { name: "lookup_order", input: { orderId: "A1" } },
            { name: "lookup_order", input: { orderId: "A2" } },
          ],
        },
        { toolCalls: [{ name: "lookup_order", input: { orderId: "A3" } }] },
        { text: "done" },
      ],
    });
    const { events } = await h.run("three orders");
    const ids = ofType(events, "tool.started").map((e) => e.data.callId);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });

  it("renders the agent again before every model step, following the current input", async () => {
    h = await start({
      steps: [
        { toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }] },
        { text: "ok" },
        { text: "refund noted" },
      ],
    });
    const { events } = await h.run("Where is A1?");
    const renders = ofType(events, "agent.rendered");
    expect(renders).toHaveLength(2);
    expect(renders[0]!.data.enabledTools).toEqual(["lookup_order"]);
    expect(renders[0]!.data.instructions).toBe(
      "Help customers check orders. Ask for an order ID before lookup.",
    );
    expect(renders[0]!.data.renderId).not.toBe(renders[1]!.data.renderId);

    const refund = await h.run("I want a refund for A1");
    expect(ofType(refund.events, "agent.rendered")[0]!.data.enabledTools).toEqual([
      "lookup_order",
      "issue_refund",
    ]);
  });

  it("queues turns of one session and runs them in order", async () => {
    h = await start({
      steps: [{ text: "one" }, { text: "two" }, { text: "three" }],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "support" });
    const a = await h.runtime.sessions.sendTurn(session.id, { text: "1" });
    const b = await h.runtime.sessions.sendTurn(session.id, { text: "2" });
    const c = await h.runtime.sessions.sendTurn(session.id, { text: "3" });
    await h.runtime.sessions.waitForTurn(session.id, c.turnId);
    const events = await h.events(session.id);
    const order = ofType(events, "turn.completed").map((e) => e.turnId);
    expect(order).toEqual([a.turnId, b.turnId, c.turnId]);
    expect(ofType(events, "message.completed").map((e) => e.data.text)).toEqual([
      "one",
      "two",
      "three",
    ]);
  });

  it("returns the same turn for a reused idempotency key", async () => {
    h = await start({ steps: [{ text: "one" }, { text: "two" }] });
    const { session } = await h.runtime.sessions.create({ agentId: "support" });
    const first = await h.runtime.sessions.sendTurn(
      session.id,
      { text: "1" },
      { idempotencyKey: "k1" },
    );
    const again = await h.runtime.sessions.sendTurn(
      session.id,
      { text: "1" },
      { idempotencyKey: "k1" },
    );
    expect(first.duplicate).toBe(false);
    expect(again).toMatchObject({ turnId: first.turnId, duplicate: true });
    await h.runtime.sessions.waitForTurn(session.id, first.turnId);
    expect((await h.runtime.sessions.get(session.id)).turns).toHaveLength(1);
  });

  it("refuses malformed input with a typed error naming the field, writing nothing", async () => {
    h = await start({ steps: [] });
    const { session } = await h.runtime.sessions.create({ agentId: "support" });
    const before = await h.events(session.id);
    await expect(h.runtime.sessions.sendTurn(session.id, { txt: "typo" })).rejects.toMatchObject({
      code: "invalid_input",
      details: { path: "input.txt" },
    });
    await expect(h.runtime.sessions.sendTurn(session.id, { text: 42 })).rejects.toMatchObject({
      details: { path: "input.text" },
    });
    await expect(
      h.runtime.sessions.sendTurn(session.id, { text: "x".repeat(100_001) }),
    ).rejects.toMatchObject({
      details: { path: "input.text" },
    });
    await expect(
      h.runtime.sessions.sendTurn(session.id, { text: "a" }, { mode: "later" as never }),
    ).rejects.toMatchObject({
      details: { path: "mode" },
    });
    await expect(h.runtime.sessions.sendTurn("ses_missing", { text: "a" })).rejects.toMatchObject({
      code: "not_found",
    });
    expect(await h.events(session.id)).toEqual(before);
  });
});

const inProcess = async (options: HarnessOptions) => {
  const started = await harness(options);
  open.push(started);
  return started;
};

describe("listing sessions", () => {
  it("pages newest first with stable cursors and filters by agent, status and labels", async () => {
    h = await inProcess({ agents: { support, other: support }, steps: [{ text: "hi" }] });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { session } = await h.runtime.sessions.create({
        agentId: i === 4 ? "other" : "support",
        labels: { team: i % 2 === 0 ? "red" : "blue" },
      });
      ids.push(session.id);
    }
    const first = await h.runtime.sessions.list({ limit: 2 });
    const second = await h.runtime.sessions.list({ limit: 2, cursor: first.nextCursor! });
    const third = await h.runtime.sessions.list({ limit: 2, cursor: second.nextCursor! });
    const all = (await h.runtime.sessions.list({ limit: 100 })).sessions.map((s) => s.id);
    const paged = [...first.sessions, ...second.sessions, ...third.sessions].map((s) => s.id);
    expect(paged).toEqual(all);
    expect([...paged].sort()).toEqual([...ids].sort());
    const created = await Promise.all(
      all.map(async (id) => (await h.runtime.sessions.get(id)).createdAt),
    );
    expect(created).toEqual([...created].sort().reverse());
    expect(third.nextCursor).toBeNull();
    expect((await h.runtime.sessions.list({ agentId: "other" })).sessions.map((s) => s.id)).toEqual(
      [ids[4]],
    );
    const blue = (await h.runtime.sessions.list({ labels: { team: "blue" } })).sessions.map(
      (s) => s.id,
    );
    expect(blue.sort()).toEqual([ids[1], ids[3]].sort());

    const { turnId } = await h.runtime.sessions.sendTurn(ids[0]!, { text: "hello" });
    await h.runtime.sessions.waitForTurn(ids[0]!, turnId);
    const idle = await h.runtime.sessions.list({ status: "idle" });
    expect(idle.sessions.map((s) => s.id)).toEqual([ids[0]]);
    expect(idle.sessions[0]!.activity).toMatchObject({
      activeTurnId: null,
      queued: 0,
      lastSettledTurn: { id: turnId, status: "completed" },
    });
    expect(idle.sessions[0]).not.toHaveProperty("turns");
  });

  it("refuses a bad limit, status or cursor naming the field", async () => {
    h = await inProcess({ agents: { support }, steps: [] });
    await expect(h.runtime.sessions.list({ limit: 0 })).rejects.toMatchObject({
      details: { path: "limit" },
    });
    await expect(h.runtime.sessions.list({ limit: 101 })).rejects.toMatchObject({
      details: { path: "limit" },
    });
    await expect(h.runtime.sessions.list({ status: "sleeping" as never })).rejects.toMatchObject({
      details: { path: "status" },
    });
    await expect(h.runtime.sessions.list({ cursor: "garbage" })).rejects.toMatchObject({
      details: { path: "cursor" },
    });
  });
});

describe("labels", () => {
  it("sets and unsets in one write, bumping the revision, within the limits", async () => {
    h = await inProcess({ agents: { support }, steps: [] });
    const { session } = await h.runtime.sessions.create({
      agentId: "support",
      labels: { team: "red", tier: "1" },
    });
    const updated = await h.runtime.sessions.updateLabels(session.id, {
      set: { team: "blue", env: "prod" },
      unset: ["tier"],
    });
    expect(updated.labels).toEqual({ team: "blue", env: "prod" });
    expect(updated.revision).toBeGreaterThan(session.revision);
    expect(
      (await h.runtime.sessions.list({ labels: { env: "prod" } })).sessions.map((s) => s.id),
    ).toEqual([session.id]);
    await expect(
      h.runtime.sessions.updateLabels(session.id, { set: { Bad: "x" } }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      details: { path: "set.Bad" },
    });
    const many = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, "v"]));
    await expect(h.runtime.sessions.updateLabels(session.id, { set: many })).rejects.toMatchObject({
      details: { path: "labels" },
    });
    await expect(
      h.runtime.sessions.updateLabels(session.id, { set: { a: "x" }, unset: ["a"] }),
    ).rejects.toMatchObject({
      details: { path: "unset" },
    });
    expect((await h.runtime.sessions.get(session.id)).labels).toEqual({
      team: "blue",
      env: "prod",
    });
  });
});
