// settleTurn's `known` state: the worker settles from what it knows under its lease without
// reading the store, and a stale picture is refused by the write's guards and read again, so
// the settlement is the same either way.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStore, type SqliteStore } from "@opencomputer/store-sqlite";
import {
  createdEvents,
  sessionRecord,
  toolCallRecord,
  turnRecord,
} from "@opencomputer/testkit/store-fixtures";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineContext } from "../../src/engine/context.ts";
import { Notifier } from "../../src/engine/notifier.ts";
import { type KnownState, settleTurn } from "../../src/engine/settle.ts";
import type { ToolCallRecord, TurnRecord } from "../../src/ports/records.ts";
import type { Store } from "../../src/ports/store.ts";
import { NO_TRACING } from "../../src/ports/tracing.ts";

describe("settleTurn with the worker's known state", () => {
  let dir: string;
  let store: SqliteStore;
  let reads: number;
  let ctx: EngineContext;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "oc-settle-"));
    store = createSqliteStore({ path: join(dir, "data.db") });
    reads = 0;
    // Counts the reads settleTurn makes; everything else goes to the real store.
    const counted: Store = Object.create(store, {
      getSession: {
        value: (id: string) => {
          reads++;
          return store.getSession(id);
        },
      },
      listToolCalls: {
        value: (id: string, turnId?: string) => {
          reads++;
          return store.listToolCalls(id, turnId);
        },
      },
    });
    ctx = {
      store: counted,
      notifier: new Notifier(),
      tracing: NO_TRACING,
    } as unknown as EngineContext;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A running session and turn with two calls started; the second then completed. */
  async function runningTurn(): Promise<{
    turn: TurnRecord;
    open: ToolCallRecord;
    done: ToolCallRecord;
  }> {
    const s = sessionRecord({ status: "running" });
    await store.createSession(s, createdEvents(s));
    const turn = turnRecord(s.id, { status: "running" });
    const open = toolCallRecord(s.id, turn.id);
    const started = toolCallRecord(s.id, turn.id);
    const done: ToolCallRecord = { ...started, status: "completed", output: { ok: true } };
    await store.apply(s.id, {
      ops: [
        { type: "turn.insert", turn },
        { type: "toolCall.upsert", call: open },
        { type: "toolCall.upsert", call: done },
      ],
      events: [],
    });
    return { turn, open, done };
  }

  async function settleWith(turn: TurnRecord, known: KnownState | undefined) {
    const settled = await settleTurn(
      ctx,
      turn,
      { status: "failed", error: { code: "agent_failed", message: "boom" } },
      known ? { known } : {},
    );
    const events = await store.readEvents(turn.sessionId, 0, 100);
    return { settled, tail: events.slice(-3).map((e) => [e.type, e.data]) };
  }

  const expected = (open: ToolCallRecord) => [
    ["tool.failed", expect.objectContaining({ callId: open.callId, settledBy: "turn_failed" })],
    ["turn.failed", { code: "agent_failed", message: "boom" }],
    ["session.status_changed", { from: "running", to: "idle" }],
  ];

  it("trusts a true picture and reads nothing", async () => {
    const { turn, open } = await runningTurn();
    const result = await settleWith(turn, { sessionStatus: "running", openCalls: [open] });
    expect(result).toEqual({ settled: true, tail: expected(open) });
    expect(reads).toBe(0);
    expect((await store.getSession(turn.sessionId))!.status).toBe("idle");
  });

  it("reads again when a call it thinks open has completed", async () => {
    const { turn, open, done } = await runningTurn();
    const stale = { ...done, status: "started" as const };
    const result = await settleWith(turn, { sessionStatus: "running", openCalls: [open, stale] });
    // Only the call still open is failed; the completed one keeps its outcome.
    expect(result).toEqual({ settled: true, tail: expected(open) });
    expect(reads).toBeGreaterThan(0);
    expect((await store.getToolCall(turn.sessionId, done.callId))!.status).toBe("completed");
  });

  it("reads again when it misses an open call", async () => {
    const { turn, open } = await runningTurn();
    const result = await settleWith(turn, { sessionStatus: "running", openCalls: [] });
    expect(result).toEqual({ settled: true, tail: expected(open) });
    expect(reads).toBeGreaterThan(0);
  });

  it("reads again when the session's status is not what it thinks", async () => {
    const { turn, open } = await runningTurn();
    const result = await settleWith(turn, { sessionStatus: "idle", openCalls: [open] });
    expect(result).toEqual({ settled: true, tail: expected(open) });
    expect(reads).toBeGreaterThan(0);
  });

  it("returns false for a turn already settled, known state or not", async () => {
    const { turn, open } = await runningTurn();
    expect((await settleWith(turn, undefined)).settled).toBe(true);
    const again = await settleWith(turn, { sessionStatus: "running", openCalls: [open] });
    expect(again.settled).toBe(false);
  });
});
