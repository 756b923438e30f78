// The PostgreSQL WorkSignal against a private cluster: notifications leave with the commit
// (never for a rollback), say whether the commit queued work, reach everyone for work and
// otherwise only while the session is followed, survive a dropped LISTEN connection (marks
// renewed, resync, then live again), and a released lease with work left is announced.
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
  signal = await createPostgresSignal({
    connectionString: url,
    reconnectMs: 20,
    client: { application_name: "oc_signal_under_test" },
  });
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

/** Follows the session and waits until its commits are heard (the mark committed). */
async function follow(sessionId: string): Promise<() => void> {
  const marked = next((s) => s.kind === "resync" && s.sessionId === sessionId);
  const unfollow = signal.follow(sessionId);
  await marked;
  return unfollow;
}

async function createSession(id: string): Promise<void> {
  await store.createSession(sessionRecord({ id }), [
    { type: "session.created", data: { agentId: "agent_a", deploymentId: "dep_1" } },
  ]);
}

async function sql(text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

async function followedFor(sessionId: string): Promise<number> {
  const { rows } = await sql(
    `SELECT followed_until - (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS left
     FROM sessions WHERE id = $1`,
    [sessionId],
  );
  return Number(rows[0].left);
}

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
    await createSession("ses_sig1");
    const unfollow = await follow("ses_sig1");
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
    unfollow();
  });

  it("notifies a commit without work only while its session is followed", async () => {
    for (const id of ["ses_quiet", "ses_loud", "ses_twice"]) await createSession(id);
    const unfollowLoud = await follow("ses_loud");
    const either = (s: SessionSignal) =>
      s.kind === "commit" && (s.sessionId === "ses_quiet" || s.sessionId === "ses_loud");
    // Notifications arrive in commit order: the first heard is the followed session's.
    const first = next(either);
    await store.apply("ses_quiet", { ops: [], events: [ev("x", {})] });
    await store.apply("ses_loud", { ops: [], events: [ev("x", {})] });
    expect(await first).toMatchObject({ sessionId: "ses_loud", lastSeq: 2 });

    // Work reaches every process, followed or not.
    const work = next(either);
    await store.apply("ses_quiet", {
      ops: [{ type: "turn.insert", turn: queuedTurn("ses_quiet", "turn_q") }],
      events: [{ type: "turn.queued", turnId: "turn_q", data: { mode: "queue" } }],
    });
    expect(await work).toMatchObject({ sessionId: "ses_quiet", lastSeq: 3, work: true });

    // A lapsed mark sends nothing; renewing marks it again.
    const left = await followedFor("ses_loud");
    expect(left).toBeGreaterThan(50_000);
    expect(left).toBeLessThanOrEqual(60_000);
    await sql("UPDATE sessions SET followed_until = 0 WHERE id = 'ses_loud'");
    const afterLapse = next(either);
    await store.apply("ses_loud", { ops: [], events: [ev("x", {})] });
    await store.apply("ses_quiet", {
      ops: [{ type: "turn.insert", turn: queuedTurn("ses_quiet", "turn_r") }],
      events: [{ type: "turn.queued", turnId: "turn_r", data: { mode: "queue" } }],
    });
    expect(await afterLapse).toMatchObject({ sessionId: "ses_quiet", work: true });
    await signal.renewFollows();
    expect(await followedFor("ses_loud")).toBeGreaterThan(50_000);
    const renewed = next(either);
    await store.apply("ses_loud", { ops: [], events: [ev("x", {})] });
    expect(await renewed).toMatchObject({ sessionId: "ses_loud", lastSeq: 4 });

    // Two readers of one session: marked while either follows; unfollowing sends nothing.
    const unfollowA = await follow("ses_twice");
    const unfollowB = signal.follow("ses_twice");
    unfollowA();
    await sql("UPDATE sessions SET followed_until = 0 WHERE id IN ('ses_twice', 'ses_loud')");
    await signal.renewFollows();
    expect(await followedFor("ses_twice")).toBeGreaterThan(50_000);
    unfollowB();
    unfollowLoud();
    await sql("UPDATE sessions SET followed_until = 0 WHERE id IN ('ses_twice', 'ses_loud')");
    await signal.renewFollows();
    expect(await followedFor("ses_twice")).toBeLessThan(0);
    expect(await followedFor("ses_loud")).toBeLessThan(0);
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

  it("releases the leases asked for in one tick with one statement, each only as given", async () => {
    const ids = ["ses_rel1", "ses_rel2", "ses_rel3", "ses_rel4"];
    for (const id of ids) await createSession(id);
    const leases = await Promise.all(ids.map((id) => store.acquireLease(id, "rt_a", 60_000)));
    // ses_rel3's lease was extended since it was read, and ses_rel4 changed hands: their
    // releases are late and must leave the newer leases alone.
    const renewed = await store.renewLease("ses_rel3", leases[2]!, 120_000, Date.now() + 5);
    await sql(
      "UPDATE sessions SET lease_runtime_id = 'rt_b', lease_epoch = 7 WHERE id = 'ses_rel4'",
    );
    // ses_rel2 still has a queued turn: its release is announced as work.
    await store.apply("ses_rel2", {
      ops: [{ type: "turn.insert", turn: queuedTurn("ses_rel2", "turn_r2") }],
      events: [{ type: "turn.queued", turnId: "turn_r2", data: { mode: "queue" } }],
    });
    const announced = next((s) => s.kind === "commit" && s.sessionId === "ses_rel2" && s.work);
    const texts: string[] = [];
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const query = proto.query;
    proto.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as { text?: string } | string;
      texts.push(typeof q === "string" ? q : (q.text ?? ""));
      return query.apply(this, args);
    };
    try {
      await Promise.all(ids.map((id, i) => store.releaseLease(id, leases[i]!)));
    } finally {
      proto.query = query;
    }
    // Only the store's release statements (the signal's own client may renew its marks).
    const releases = texts.filter((t) => t.includes("lease_expires_at = 0"));
    expect(releases).toHaveLength(1);
    expect(releases[0]).toContain("unnest(");
    expect(await announced).toMatchObject({ sessionId: "ses_rel2", lastSeq: 2, work: true });
    const { rows } = await sql(
      "SELECT id, lease_runtime_id, lease_epoch, lease_expires_at FROM sessions WHERE id = ANY($1) ORDER BY id",
      [ids],
    );
    expect(rows.map((r) => [r.id, r.lease_runtime_id, Number(r.lease_expires_at) > 0])).toEqual([
      ["ses_rel1", "rt_a", false],
      ["ses_rel2", "rt_a", false],
      ["ses_rel3", "rt_a", true],
      ["ses_rel4", "rt_b", true],
    ]);
    expect(Number(rows[2].lease_expires_at)).toBe(renewed!.expiresAt);
    expect(Number(rows[3].lease_epoch)).toBe(7);
  });

  it("reconnects after the LISTEN connection is killed, renews its marks, resyncs, then hears commits again", async () => {
    await createSession("ses_sig3");
    const unfollow = await follow("ses_sig3");
    await sql("UPDATE sessions SET followed_until = 0 WHERE id = 'ses_sig3'");
    const before = signal.connections;
    const resync = next((s) => s.kind === "resync");
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
         WHERE application_name = 'oc_signal_under_test'`,
      );
      expect(rows.length).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.end();
    }
    await resync;
    expect(signal.connections).toBe(before + 1);
    // The mark lapsed while away (set to 0 above): the reconnect renewed it before resyncing.
    expect(await followedFor("ses_sig3")).toBeGreaterThan(50_000);
    const live = next(commitOf("ses_sig3"));
    await store.apply("ses_sig3", { ops: [], events: [ev("x", {})] });
    expect(await live).toMatchObject({ lastSeq: 2, work: false });
    unfollow();
  });
});
