// Write-behind under group commit (deferred-rows.ts, pending-rows.ts): a change is journaled and
// kept in memory; SQLite runs its rows before the next statement that needs them, or at the
// group's commit. These tests hold it to the store without it (groupCommitMs 0) operation by
// operation, and check what runs when.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Lease, Store, TurnStatus, WriteBatch, WriteOp } from "@opencomputer/runtime";
import {
  ev,
  messageRecord,
  resultRecord,
  sessionRecord,
  toolCallRecord,
  turnRecord,
} from "@opencomputer/testkit/store-fixtures";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteStore, type GroupClock, type SqliteStore } from "../src/index.ts";

let dir: string;
const open: SqliteStore[] = [];
/**
 * A group ends only when the test makes it (a read that needs the rows, close): its age never
 * grows and the process is never "idle", so what SQLite holds at each step does not depend on
 * how loaded the machine is.
 */
const FROZEN: GroupClock = { now: () => 0, onIdle: () => () => {} };
const openStore = (name: string, groupCommitMs?: number, groupClock = FROZEN) => {
  const store = createSqliteStore({
    path: join(dir, name),
    groupClock,
    ...(groupCommitMs === undefined ? {} : { groupCommitMs }),
  });
  open.push(store);
  return store;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "oc-behind-"));
});
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** What SQLite itself holds for the session, read on the store's connection past the store. */
function rowsInSqlite(store: SqliteStore, sessionId: string) {
  const count = (table: string) =>
    (
      store.database
        .prepare(`SELECT count(*) AS n FROM ${table} WHERE session_id = ?`)
        .get(sessionId) as { n: number }
    ).n;
  const session = store.database.prepare("SELECT count(*) AS n FROM sessions WHERE id = ?");
  return {
    sessions: (session.get(sessionId) as { n: number }).n,
    turns: count("turns"),
    events: count("events"),
  };
}

/**
 * A value as JSON without what the store stamps itself (times, event ids, a lease's expiry taken
 * from the clock), which two stores cannot agree on.
 */
function comparable(value: unknown): string | undefined {
  return JSON.stringify(value, (key, v) =>
    key === "timestamp" ||
    key === "updatedAt" ||
    key === "expiresAt" ||
    (key === "id" && typeof v === "string" && v.startsWith("evt_"))
      ? ""
      : v,
  );
}

/** Every read of a session. */
async function snapshot(store: Store, sessionId: string) {
  return comparable({
    session: await store.getSession(sessionId),
    turns: await store.listTurns(sessionId),
    active: (await store.listActiveTurns(sessionId)).map((t) => t.id),
    messages: await store.listMessages(sessionId),
    toolCalls: await store.listToolCalls(sessionId),
    results: await store.listResults(sessionId, { limit: 1000 }),
    events: await store.readEvents(sessionId, 0, 100_000),
  });
}

describe("write-behind", () => {
  it("answers reads of a session created in the open group from memory, then commits its rows", async () => {
    const store = openStore("a.db");
    const s = sessionRecord();
    await store.createSession(s, [ev("session.created")]);
    const turn = turnRecord(s.id, { status: "running" });
    await store.apply(s.id, {
      ops: [
        { type: "turn.insert", turn },
        { type: "session.update", patch: { status: "running" } },
      ],
      events: [ev("turn.started", {}, turn.id)],
    });
    // Journaled and acknowledged, not yet run: SQLite has none of it.
    expect(rowsInSqlite(store, s.id)).toEqual({ sessions: 0, turns: 0, events: 0 });
    expect((await store.getSession(s.id))?.status).toBe("running");
    expect((await store.getSession(s.id))?.lastSeq).toBe(2);
    expect(await store.getTurn(s.id, turn.id)).toStrictEqual(turn);
    expect(await store.getTurn(s.id, "turn_missing")).toBeUndefined();
    expect((await store.listActiveTurns(s.id)).map((t) => t.id)).toEqual([turn.id]);
    expect(rowsInSqlite(store, s.id)).toEqual({ sessions: 0, turns: 0, events: 0 });
    // A read the memory does not answer runs the session's rows first.
    expect(await store.readEvents(s.id, 0, 10)).toHaveLength(2);
    expect(rowsInSqlite(store, s.id)).toEqual({ sessions: 1, turns: 1, events: 2 });
  });

  it("runs only the rows of the session a statement is about", async () => {
    const store = openStore("a.db");
    const a = sessionRecord();
    const b = sessionRecord();
    await store.createSession(a, [ev("session.created")]);
    await store.createSession(b, [ev("session.created")]);
    await store.readEvents(b.id, 0, 10);
    expect(rowsInSqlite(store, a.id).events).toBe(0);
    expect(rowsInSqlite(store, b.id).events).toBe(1);
    // Across sessions (a listing): everything runs.
    expect((await store.listSessions({ limit: 10 })).map((s) => s.id).sort()).toEqual(
      [a.id, b.id].sort(),
    );
    expect(rowsInSqlite(store, a.id).events).toBe(1);
  });

  it("merges a session's changes: each column ends at its last value, revisions add up", async () => {
    const store = openStore("a.db");
    const s = sessionRecord({ revision: 1 });
    await store.createSession(s, [ev("session.created")]);
    await store.readEvents(s.id, 0, 1); // the session's row is in SQLite now
    const turn = turnRecord(s.id);
    await store.apply(s.id, { ops: [{ type: "turn.insert", turn }], events: [ev("q")] });
    for (const status of ["running", "idle", "running"] as const) {
      await store.apply(s.id, {
        ops: [
          { type: "session.update", patch: { status, labels: { last: status } } },
          { type: "turn.update", id: turn.id, patch: { steps: 1, status: "running" } },
        ],
        events: [ev(status)],
      });
    }
    const session = await store.getSession(s.id);
    expect(session).toMatchObject({ status: "running", labels: { last: "running" }, lastSeq: 5 });
    // One bump per batch that changed the session or a turn: four batches.
    expect(session?.revision).toBe(5);
    expect((await store.getTurn(s.id, turn.id))?.status).toBe("running");
  });

  it("keeps refusals exact without reading SQLite: duplicates, guards, unknown turns", async () => {
    const store = openStore("a.db");
    const s = sessionRecord();
    await store.createSession(s, [ev("session.created")]);
    const turn = turnRecord(s.id);
    const message = messageRecord(s.id, turn.id);
    await store.apply(s.id, {
      ops: [
        { type: "turn.insert", turn },
        { type: "message.insert", message },
      ],
      events: [ev("q")],
    });
    const refused = (batch: WriteBatch) =>
      store.apply(s.id, batch).then(
        () => "applied",
        (error: { code?: string }) => error.code,
      );
    const dupTurn = { type: "turn.insert", turn: turnRecord(s.id, { id: turn.id }) } as WriteOp;
    expect(await refused({ ops: [dupTurn], events: [] })).toBe("duplicate");
    expect(await refused({ ops: [{ type: "message.insert", message }], events: [] })).toBe(
      "duplicate",
    );
    expect(
      await refused({ ops: [{ type: "turn.update", id: "turn_nope", patch: {} }], events: [] }),
    ).toBe("turn_not_active");
    expect(
      await refused({ expectTurn: { id: turn.id, status: ["running"] }, ops: [], events: [] }),
    ).toBe("turn_not_active");
    expect(await refused({ fence: { runtimeId: "rt", epoch: 1 }, ops: [], events: [] })).toBe(
      "stale_epoch",
    );
    // A refusal after a row changed in the same batch leaves nothing of it.
    const other = messageRecord(s.id, turn.id);
    expect(
      await refused({
        ops: [{ type: "message.insert", message: other }, dupTurn],
        events: [ev("x")],
      }),
    ).toBe("duplicate");
    expect((await store.listMessages(s.id)).map((m) => m.id)).toEqual([message.id]);
    expect((await store.getSession(s.id))?.lastSeq).toBe(2);
  });

  it("gives a rejected row back to the journal: the read fails, and the change is applied once SQLite takes it", async () => {
    const path = join(dir, "a.db");
    let idle: (() => void) | null = null;
    const store = openStore("a.db", undefined, {
      now: () => 0,
      onIdle: (commit) => {
        idle = commit;
        return () => {
          idle = null;
        };
      },
    });
    const s = sessionRecord();
    await store.createSession(s, [ev("session.created")]);
    (idle as (() => void) | null)?.(); // the process goes idle: the group commits
    // SQLite refuses one event type until the trigger is dropped (a stand-in for a full disk).
    const other = new Database(path);
    other.exec(`CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.type = 'poison'
      BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`);
    await store.apply(s.id, { ops: [], events: [ev("poison")] }); // acknowledged: journaled
    await expect(store.readEvents(s.id, 0, 10)).rejects.toThrow(/refused for the test/);
    other.exec("DROP TRIGGER poison");
    other.close();
    expect((await store.readEvents(s.id, 0, 10)).map((e) => e.type)).toEqual([
      "session.created",
      "poison",
    ]);
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM events").get()).toEqual({ n: 2 });
    raw.close();
  });

  it("reads exactly what the store without write-behind reads, after every operation of a random run", async () => {
    const behind = openStore("behind.db");
    const plain = openStore("plain.db", 0);
    const stores = [behind, plain];
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const sessions: string[] = [];
    const turns = new Map<string, string[]>();
    const calls = new Map<string, string[]>();
    const leases = new Map<string, Lease>();
    const outcome = async (run: (store: Store) => Promise<unknown>) => {
      const got = [];
      for (const store of stores) {
        got.push(
          await run(store).then(
            (value) => ({ value: comparable(value) }),
            (error: { code?: string }) => ({ error: error.code }),
          ),
        );
      }
      expect(got[0], `step ${step}`).toEqual(got[1]);
      return got[0]!;
    };

    let step = 0;
    for (; step < 1500; step++) {
      const r = random();
      if (sessions.length === 0 || r < 0.08) {
        const s = sessionRecord(random() < 0.2 ? { idempotencyKey: pick(["k1", "k2", "k3"]) } : {});
        const clash = sessions.length > 0 && random() < 0.1 ? { id: pick(sessions) } : {};
        const record = { ...s, ...clash };
        const created = await outcome((store) =>
          store.createSession(record, [ev("session.created")]),
        );
        if ("value" in created && JSON.parse(created.value!).created) sessions.push(record.id);
        continue;
      }
      // Mostly the newest sessions, so changes pile up on rows still written behind.
      const sessionId = random() < 0.8 ? sessions[sessions.length - 1]! : pick(sessions);
      const sessionTurns = turns.get(sessionId) ?? [];
      const sessionCalls = calls.get(sessionId) ?? [];
      if (r < 0.15) {
        // A fixed `now`, so both stores compute the same lease (applyWithLease reads the clock,
        // and a release needs the exact lease it gives up).
        const runtimeId = pick(["rt-a", "rt-b"]);
        let taken: Lease | null = null;
        await outcome(async (store) => {
          taken = await store.acquireLease(sessionId, runtimeId, 30_000, 1_000);
          return taken;
        });
        if (taken !== null) leases.set(sessionId, taken);
      } else if (r < 0.2 && leases.has(sessionId)) {
        const lease = leases.get(sessionId)!;
        if (random() < 0.5)
          await outcome((store) => store.renewLease(sessionId, lease, 60_000, 2_000));
        else await outcome((store) => store.releaseLease(sessionId, lease));
      } else if (r < 0.8) {
        const ops: WriteOp[] = [];
        const n = 1 + Math.floor(random() * 4);
        for (let i = 0; i < n; i++) {
          const kind = random();
          if (kind < 0.25 || sessionTurns.length === 0) {
            const key = random() < 0.15 ? pick(["t1", "t2"]) : null;
            const id = random() < 0.05 && sessionTurns.length > 0 ? pick(sessionTurns) : undefined;
            const turn = turnRecord(sessionId, { idempotencyKey: key, ...(id ? { id } : {}) });
            ops.push({ type: "turn.insert", turn });
            sessionTurns.push(turn.id);
          } else if (kind < 0.45) {
            const status = pick<TurnStatus>(["queued", "running", "completed", "cancelled"]);
            const id = random() < 0.05 ? "turn_missing" : pick(sessionTurns);
            ops.push({
              type: "turn.update",
              id,
              patch: { status, steps: Math.floor(random() * 5) },
            });
          } else if (kind < 0.6) {
            const id = random() < 0.05 ? "msg_fixed" : undefined;
            ops.push({
              type: "message.insert",
              message: messageRecord(sessionId, pick(sessionTurns), id),
            });
          } else if (kind < 0.75) {
            const callId =
              sessionCalls.length > 0 && random() < 0.5 ? pick(sessionCalls) : undefined;
            const call = toolCallRecord(sessionId, pick(sessionTurns), {
              ...(callId ? { callId } : {}),
              status: pick(["started", "completed", "failed"] as const),
            });
            ops.push({ type: "toolCall.upsert", call });
            sessionCalls.push(call.callId);
          } else if (kind < 0.9) {
            ops.push({
              type: "session.update",
              patch: pick([
                { status: "running" },
                { status: "idle" },
                { labels: { n: String(step) } },
                { result: { turnId: "t", callId: "c", reportedAt: "r", data: { step } } },
              ] as const),
            });
          } else {
            const callId =
              random() < 0.3 && sessionCalls.length > 0 ? pick(sessionCalls) : undefined;
            ops.push({
              type: "result.insert",
              record: resultRecord(
                sessionId,
                pick(sessionTurns),
                callId ? { toolCallId: callId } : {},
              ),
            });
          }
        }
        const batch: WriteBatch = {
          ops,
          events: Array.from({ length: Math.floor(random() * 4) }, (_, i) => ev(`e${i}`, { step })),
          ...(random() < 0.2 && sessionTurns.length > 0
            ? {
                expectTurn: {
                  id: pick(sessionTurns),
                  status: ["queued", "running"] as TurnStatus[],
                },
              }
            : {}),
          ...(random() < 0.1 ? { expectSession: { status: ["running"] as const } } : {}),
          ...(random() < 0.1 && leases.has(sessionId) ? { fence: leases.get(sessionId)! } : {}),
          ...(random() < 0.1 && sessionTurns.length > 0
            ? { expectOpenCalls: { turnId: pick(sessionTurns), callIds: [] } }
            : {}),
        };
        if (random() < 0.15) {
          const runtimeId = pick(["rt-a", "rt-b"]);
          await outcome((store) => store.applyWithLease(sessionId, runtimeId, 30_000, batch));
        } else {
          await outcome((store) => store.apply(sessionId, batch));
        }
      } else if (r < 0.95) {
        const reads = [
          snapshot,
          (store: Store, id: string) => store.getSession(id),
          (store: Store, id: string) => store.listActiveTurns(id),
        ];
        const read = pick(reads);
        await outcome((store) => read(store, sessionId));
      } else {
        // Let the write-behind store's group commit on idle.
        await new Promise((resolve) => setImmediate(resolve));
      }
      turns.set(sessionId, sessionTurns);
      calls.set(sessionId, sessionCalls);
    }
    for (const sessionId of sessions) {
      expect(await snapshot(behind, sessionId)).toEqual(await snapshot(plain, sessionId));
    }
    // And the same after a reopen, from SQLite alone.
    await behind.close();
    const reopened = openStore("behind.db");
    for (const sessionId of sessions) {
      expect(await snapshot(reopened, sessionId)).toEqual(await snapshot(plain, sessionId));
    }
  });
});
