// The PostgreSQL WorkSignal against a private cluster: notifications leave with the commit
// (never for a rollback), say whether the commit queued work, survive a dropped LISTEN
// connection (resync, then live again), and a released lease with work left is announced.
import type { SessionSignal, TurnRecord } from "@opencomputer/runtime";
import { StoreError } from "@opencomputer/runtime";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { sessionRecord } from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPostgresSignal,
  createPostgresStore,
  type PostgresSignal,
  type PostgresStore,
} from "../../src/index.ts";

let cluster: PrivateCluster;
let url: string;
let store: PostgresStore;
let signal: PostgresSignal;
const heard: SessionSignal[] = [];

beforeAll(async () => {
  cluster = await startPrivateCluster();
  url = cluster.connectionString(await cluster.createDatabase());
  store = await createPostgresStore({ connectionString: url });
  signal = await createPostgresSignal({ connectionString: url, reconnectMs: 20 });
  signal.listen((s) => heard.push(s));
}, 60_000);

afterAll(async () => {
  await signal?.close();
  await store?.close();
  await cluster?.stop();
});

/** Resolves with the first signal `match` accepts, heard from now on. */
function next(match: (s: SessionSignal) => boolean, timeoutMs = 5000): Promise<SessionSignal> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(
        new Error(`no matching signal within ${timeoutMs} ms; heard ${JSON.stringify(heard)}`),
      );
    }, timeoutMs);
    const stop = signal.listen((s) => {
      if (!match(s)) return;
      clearTimeout(timer);
      stop();
      resolve(s);
    });
  });
}

const commitOf = (sessionId: string) => (s: SessionSignal) =>
  s.kind === "commit" && s.sessionId === sessionId;

function queuedTurn(sessionId: string, id: string): TurnRecord {
  const now = new Date().toISOString();
  return {
    id,
    sessionId,
    input: { source: "user" as const, text: "hi" },
    mode: "queue" as const,
    status: "queued" as const,
    outcome: null,
    error: null,
    idempotencyKey: null,
    steps: 0,
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    settledAt: null,
  };
}

describe("PostgreSQL work signal", () => {
  it("notifies each commit with its last seq and whether it queued work; never a rollback", async () => {
    await store.createSession(sessionRecord({ id: "ses_sig1" }), [
      { type: "session.created", data: { agentId: "agent_a", deploymentId: "dep_1" } },
    ]);
    const plain = next(commitOf("ses_sig1"));
    await store.apply("ses_sig1", {
      ops: [],
      events: [{ type: "session.labels_changed", data: { labels: {} } }],
    });
    expect(await plain).toEqual({ kind: "commit", sessionId: "ses_sig1", lastSeq: 2, work: false });

    // A refused write (stale fence) rolls back: nothing may be heard for it.
    const refused = store.apply("ses_sig1", {
      fence: { runtimeId: "rt_x", epoch: 9 },
      ops: [],
      events: [ev("never", {})],
    });
    await expect(refused).rejects.toBeInstanceOf(StoreError);

    const work = next(commitOf("ses_sig1"));
    await store.apply("ses_sig1", {
      ops: [{ type: "turn.insert", turn: queuedTurn("ses_sig1", "turn_1") }],
      events: [
        {
          type: "message.received",
          turnId: "turn_1",
          data: { input: { source: "user", text: "hi" }, mode: "queue" },
        },
        { type: "turn.queued", turnId: "turn_1", data: { mode: "queue" } },
      ],
    });
    // The next commit heard is the turn's (seq 4), not the refused one.
    expect(await work).toEqual({ kind: "commit", sessionId: "ses_sig1", lastSeq: 4, work: true });

    // A turn queued with the lease claimed in the same write is the claimer's to run: the
    // commit is heard, but as no work for anyone else.
    const claimed = next(commitOf("ses_sig1"));
    await store.applyWithLease("ses_sig1", "rt_claimer", 10_000, {
      ops: [{ type: "turn.insert", turn: queuedTurn("ses_sig1", "turn_2") }],
      events: [{ type: "turn.queued", turnId: "turn_2", data: { mode: "queue" } }],
    });
    expect(await claimed).toEqual({
      kind: "commit",
      sessionId: "ses_sig1",
      lastSeq: 5,
      work: false,
    });
  });

  it("announces a released lease as work only while turns wait", async () => {
    await store.createSession(sessionRecord({ id: "ses_sig2" }), [
      { type: "session.created", data: { agentId: "agent_a", deploymentId: "dep_1" } },
    ]);
    const lease = await store.acquireLease("ses_sig2", "rt_a", 60_000);
    // No turns: releasing announces nothing; the marker commit after it is the next signal.
    await store.releaseLease("ses_sig2", lease!);
    const marker = next(commitOf("ses_sig2"));
    await store.apply("ses_sig2", {
      ops: [{ type: "turn.insert", turn: queuedTurn("ses_sig2", "turn_2") }],
      events: [{ type: "turn.queued", turnId: "turn_2", data: { mode: "queue" } }],
    });
    expect(await marker).toMatchObject({ lastSeq: 2, work: true });

    const again = await store.acquireLease("ses_sig2", "rt_a", 60_000);
    const released = next(commitOf("ses_sig2"));
    await store.releaseLease("ses_sig2", again!);
    expect(await released).toEqual({
      kind: "commit",
      sessionId: "ses_sig2",
      lastSeq: 2,
      work: true,
    });
  });

  it("reconnects after the LISTEN connection is killed, resyncs, then hears commits again", async () => {
    const before = signal.connections;
    const resync = next((s) => s.kind === "resync");
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
         WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
      );
      expect(rows.length).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.end();
    }
    await resync;
    expect(signal.connections).toBe(before + 1);
    await store.createSession(sessionRecord({ id: "ses_sig3" }), [
      { type: "session.created", data: { agentId: "agent_a", deploymentId: "dep_1" } },
    ]);
    const live = next(commitOf("ses_sig3"));
    await store.apply("ses_sig3", { ops: [], events: [ev("x", {})] });
    expect(await live).toMatchObject({ lastSeq: 2, work: false });
  });
});
