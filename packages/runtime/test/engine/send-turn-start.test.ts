// sendTurn's fast path: a turn that can start at once is inserted started, in the one write that
// also claims the session's lease, instead of being queued by one write and started by another.
// When it cannot (a turn runs or waits, another runtime holds the session, the write races
// another sender) the turn is queued as before and nothing of the attempt is left behind.

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/ports/store.ts";
import { releaseGates, setMark } from "./fixtures/marks.ts";
import { countingCalls, type Harness, harness, ofType, types, until } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/leases-agents.ts", import.meta.url));

/** Counts the store's writes by method, so a test can say how many a call made. */
const countingWrites = (counts: Record<string, number>) =>
  countingCalls(["apply", "applyWithLease"], counts);

let h: Harness;
let sessionId = "";
afterEach(async () => {
  await releaseGates(sessionId, async () => h?.close());
  sessionId = "";
});

describe("sendTurn on a session with nothing to wait for", () => {
  it("inserts the turn started, with the lease, in one write", async () => {
    const counts: Record<string, number> = {};
    h = await harness({
      agentsModule: AGENTS,
      steps: [{ text: "hello" }],
      wrapStore: countingWrites(counts),
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const before = { ...counts };
    const sent = await h.runtime.sessions.sendTurn(session.id, { text: "hi" });
    expect(sent).toMatchObject({ status: "running", duplicate: false });
    expect(counts.applyWithLease ?? 0).toBe((before.applyWithLease ?? 0) + 1);
    expect(counts.apply ?? 0).toBe(before.apply ?? 0);
    // Already running when sendTurn returns: no reader ever sees it queued.
    const turn = (await h.store.getTurn(session.id, sent.turnId))!;
    expect(turn.status).toBe("running");
    expect(turn.startedAt).not.toBeNull();
    const claimed = (await h.store.getSession(session.id))!;
    expect(claimed.status).toBe("running");
    expect(claimed.lease?.runtimeId).toBeDefined();

    await h.runtime.sessions.waitForTurn(session.id, sent.turnId);
    const events = await h.events(session.id);
    expect(types(events).slice(0, 5)).toEqual([
      "session.created",
      "message.received",
      "turn.queued",
      "turn.started",
      "session.status_changed",
    ]);
    // The four came from one commit: same timestamp, consecutive seqs.
    const [received, queued, started, status] = events.slice(1, 5);
    expect(new Set([received, queued, started, status].map((e) => e!.timestamp)).size).toBe(1);
    expect(queued!.data).toEqual({ mode: "queue" });
    expect(started!.data).toEqual({});
    expect(status!.data).toEqual({ from: "new", to: "running" });
    // The user's message was written with it, once.
    const users = (await h.store.listMessages(session.id)).filter((m) => m.role === "user");
    expect(users.map((m) => m.turnId)).toEqual([sent.turnId]);
  });

  it("starts a turn of an idle session the same way, after the conversation so far", async () => {
    h = await harness({ agentsModule: AGENTS, steps: [{ text: "one" }, { text: "two" }] });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const first = await h.runtime.sessions.sendTurn(session.id, { text: "first" });
    await h.runtime.sessions.waitForTurn(session.id, first.turnId);
    // A runtime that knows nothing of the session (this one closed, giving its lease up) reads
    // the conversation so far when it starts the turn.
    await h.runtime.close();
    const next = h.newRuntime();
    await next.start();
    const second = await next.sessions.sendTurn(session.id, { text: "second" });
    expect(second.status).toBe("running");
    const done = await next.sessions.waitForTurn(session.id, second.turnId);
    expect(done.status).toBe("completed");
    // The scripted model picked its step by the assistant messages it was sent: the second
    // step means the second turn saw the first turn's conversation.
    const assistant = (await h.store.listMessages(session.id)).filter(
      (m) => m.role === "assistant",
    );
    expect(JSON.stringify(assistant.map((m) => m.content))).toContain("two");
    const statuses = ofType(await h.events(session.id), "session.status_changed").map(
      (e) => e.data,
    );
    expect(statuses).toEqual([
      { from: "new", to: "running" },
      { from: "running", to: "idle" },
      { from: "idle", to: "running" },
      { from: "running", to: "idle" },
    ]);
  });
});

describe("sendTurn when the turn cannot start at once", () => {
  it("queues behind a running turn; the queued turn starts after it", async () => {
    h = await harness({
      agentsModule: AGENTS,
      steps: [{ toolCalls: [{ name: "slow_report" }] }, { text: "reported" }, { text: "next" }],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const first = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    expect(first.status).toBe("running");
    await until(async () =>
      (await h.store.listToolCalls(session.id)).some((c) => c.status === "started"),
    );
    const second = await h.runtime.sessions.sendTurn(session.id, { text: "then this" });
    expect(second.status).toBe("queued");
    expect((await h.store.getTurn(session.id, second.turnId))!.status).toBe("queued");
    setMark(session.id, "gate-0");
    expect((await h.runtime.sessions.waitForTurn(session.id, first.turnId)).status).toBe(
      "completed",
    );
    expect((await h.runtime.sessions.waitForTurn(session.id, second.turnId)).status).toBe(
      "completed",
    );
    const started = ofType(await h.events(session.id), "turn.started").map((e) => e.turnId);
    expect(started).toEqual([first.turnId, second.turnId]);
  });

  it("queues on a session another runtime holds, and leaves its lease alone", async () => {
    h = await harness({
      agentsModule: AGENTS,
      steps: [{ text: "one" }, { text: "two" }],
      leaseMs: 400,
      idleReleaseMs: 60_000,
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const first = await h.runtime.sessions.sendTurn(session.id, { text: "first" });
    await h.runtime.sessions.waitForTurn(session.id, first.turnId);
    const held = (await h.store.getSession(session.id))!.lease!;
    expect(held.expiresAt).toBeGreaterThan(Date.now());

    const other = h.newRuntime({ leaseMs: 400, recoveryIntervalMs: 50 });
    await other.start();
    const second = await other.sessions.sendTurn(session.id, { text: "second" });
    expect(second.status).toBe("queued");
    expect((await h.store.getSession(session.id))!.lease).toEqual(held);
    // Once the first runtime's lease lapses (it is idle, so it does not renew), the other one's
    // recovery takes the session and runs the turn.
    const done = await other.sessions.waitForTurn(session.id, second.turnId);
    expect(done.status).toBe("completed");
  });

  it("returns the turn another sender inserted with the same idempotency key, and runs one", async () => {
    // The other sender's turn is in the store, but this runtime's key lookup misses it (as when
    // the other insert lands between the lookup and the write), so the started insert fails on
    // the key. The store is the real one; only that one lookup is held back.
    let hide = false;
    h = await harness({
      agentsModule: AGENTS,
      steps: [{ text: "once" }, { text: "again" }],
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, key, receiver) {
            const value = Reflect.get(target, key, receiver);
            if (key !== "findTurnByIdempotencyKey") return value;
            return async (...args: [string, string]) => {
              if (hide) {
                hide = false;
                return undefined;
              }
              return (value as Store["findTurnByIdempotencyKey"]).apply(target, args);
            };
          },
        }),
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const other = h.newRuntime({ idleReleaseMs: 0 });
    const first = await other.sessions.sendTurn(
      session.id,
      { text: "hi" },
      { idempotencyKey: "k" },
    );
    await other.sessions.waitForTurn(session.id, first.turnId);
    // The other runtime gives the session up, so this one may start turns on it.
    await until(async () => ((await h.store.getSession(session.id))!.lease?.expiresAt ?? 0) === 0);
    hide = true;
    const sent = await h.runtime.sessions.sendTurn(
      session.id,
      { text: "hi" },
      { idempotencyKey: "k" },
    );
    expect(hide).toBe(false);
    expect(sent).toMatchObject({ turnId: first.turnId, duplicate: true });
    expect((await h.store.listTurns(session.id)).map((t) => t.id)).toEqual([first.turnId]);
    // The refused attempt left this runtime's worker usable.
    const next = await h.runtime.sessions.sendTurn(session.id, { text: "again" });
    expect(next.status).toBe("running");
    expect((await h.runtime.sessions.waitForTurn(session.id, next.turnId)).status).toBe(
      "completed",
    );
    expect(h.logs.filter((l) => l.level === "error")).toEqual([]);
  });
});
