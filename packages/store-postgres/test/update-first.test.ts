// Migration 12: a write that changes the session row locks, checks and updates it with one UPDATE
// (write-function-body.ts UPDATE_FIRST), and takes the earlier path when a check does not pass.
// Checked against that earlier function: the same writes, accepted or refused, on a database
// whose `oc_write` is put back to migration 10's and on one at the current version, return the
// same results and errors and leave the same rows.
import type { Store, WriteBatch } from "@opencomputer/runtime";
import { withClient } from "@opencomputer/testkit/postgres-cluster";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { createdEvents, sessionRecord, turnRecord } from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import { describe, expect, it } from "vitest";
import { createPostgresStore, type PostgresStore, SCHEMA_VERSION } from "../src/index.ts";
import { WRITE_PATH_V10 } from "../src/write-function.ts";

const cluster = usePrivateCluster();
const TTL = 60_000;

/** A store on a fresh database; `before12`: with migration 10's `oc_write` put back. */
async function storeOn(before12: boolean): Promise<{ store: PostgresStore; url: string }> {
  const url = cluster().connectionString(await cluster().createDatabase());
  const store = await createPostgresStore({ connectionString: url });
  if (before12) await withClient(url, (client) => client.query(WRITE_PATH_V10));
  return { store, url };
}

/** What a call gave: its value without the parts each database makes up, or its error. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await call();
    return JSON.parse(
      JSON.stringify(value ?? null, (key, v) =>
        ["id", "timestamp", "expiresAt"].includes(key) ? undefined : v,
      ),
    );
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { code, message };
  }
}

/** The rows a write can touch, without the columns each database makes up. */
async function rows(url: string, sessionId: string) {
  return withClient(url, async (client) => {
    const session = await client.query(
      `SELECT status, revision::int, last_seq::int, lease_runtime_id, lease_epoch::int,
          lease_expires_at > 0 AS leased, result::text, labels::text
        FROM sessions WHERE id = $1`,
      [sessionId],
    );
    const events = await client.query(
      "SELECT seq::int, type, turn_id, data::text FROM events WHERE session_id = $1 ORDER BY seq",
      [sessionId],
    );
    const turns = await client.query(
      "SELECT id, status, steps FROM turns WHERE session_id = $1 ORDER BY id",
      [sessionId],
    );
    return { session: session.rows, events: events.rows, turns: turns.rows };
  });
}

/**
 * Every kind of write the function decides on the session row: claims that take, extend or are
 * refused, fences that match or not, expected statuses, refusals raised after the row is
 * updated (which must leave nothing), a write that changes nothing on the row, a missing session.
 */
async function script(store: Store, sessionId: string, turnId: string): Promise<unknown[]> {
  const started = ev("turn.started", {}, turnId);
  const note = (text: string) => ev("message.created", { text }, turnId);
  const write = (batch: Partial<WriteBatch>) =>
    outcome(() => store.apply(sessionId, { ops: [], events: [], ...batch }));
  const claim = (runtimeId: string, batch: Partial<WriteBatch>) =>
    outcome(() =>
      store.applyWithLease(sessionId, runtimeId, TTL, { ops: [], events: [], ...batch }),
    );
  const turn = turnRecord(sessionId, { id: turnId, status: "running" });
  const results = [
    await claim("rt_a", { ops: [{ type: "turn.insert", turn }], events: [started] }),
    await claim("rt_b", { events: [note("refused: rt_a holds the lease")] }),
  ];
  // Kept whole: releasing it below needs its exact expiry.
  const extended = await store.applyWithLease(sessionId, "rt_a", TTL, {
    ops: [],
    events: [note("extended")],
  });
  if (extended === null) throw new Error("rt_a could not extend its own lease");
  return [
    ...results,
    await outcome(async () => extended),
    await write({ fence: { runtimeId: "rt_a", epoch: 1 }, events: [note("fenced")] }),
    await write({ fence: { runtimeId: "rt_a", epoch: 0 }, events: [note("old epoch")] }),
    await write({ fence: { runtimeId: "rt_b", epoch: 1 }, events: [note("other holder")] }),
    await write({ expectSession: { status: ["idle"] }, events: [note("wrong status")] }),
    await write({
      expectSession: { status: ["new", "idle"] },
      ops: [{ type: "session.update", patch: { status: "running", labels: { k: "v" } } }],
      events: [note("status")],
    }),
    // Refused after the row's UPDATE: the whole write rolls back.
    await write({ expectTurn: { id: turnId, status: ["completed"] }, events: [note("turn")] }),
    await write({
      expectOpenCalls: { turnId, callIds: ["call_missing"] },
      events: [note("calls")],
    }),
    await write({ ops: [{ type: "session.update", patch: { status: "idle" } }] }),
    // Nothing on the row changes: only the lock and the guards.
    await write({ expectSession: { status: ["idle"] } }),
    await write({ expectSession: { status: ["running"] } }),
    await outcome(() => store.releaseLease(sessionId, extended.lease)),
    await claim("rt_b", { events: [note("taken over")] }),
    await write({ fence: { runtimeId: "rt_b", epoch: 2 }, events: [note("fenced rt_b")] }),
    await outcome(() => store.apply("ses_missing", { ops: [], events: [note("no such session")] })),
  ];
}

describe("oc_write after migration 12", () => {
  it("answers every write as migration 10's function did, and leaves the same rows", async () => {
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(12);
    const s = sessionRecord();
    const turnId = "turn_update_first";
    const runs = [];
    for (const before12 of [true, false]) {
      const { store, url } = await storeOn(before12);
      try {
        await store.createSession(s, createdEvents(s));
        const results = await script(store, s.id, turnId);
        runs.push({ results, rows: await rows(url, s.id) });
      } finally {
        await store.close();
      }
    }
    const [before, after] = runs;
    expect(after!.results).toEqual(before!.results);
    expect(after!.rows).toEqual(before!.rows);
    // And what both did is what the store promises, so the comparison is not of two failures.
    const codes = after!.results.map((r) => (r as { code?: string } | null)?.code ?? "ok");
    expect(codes).toEqual([
      "ok",
      "ok",
      "ok",
      "ok",
      "stale_epoch",
      "stale_epoch",
      "session_state",
      "ok",
      "turn_not_active",
      "calls_changed",
      "ok",
      "ok",
      "session_state",
      "ok",
      "ok",
      "ok",
      "session_not_found",
    ]);
    expect(after!.results[1]).toBeNull();
    const session = after!.rows.session[0];
    expect(session).toMatchObject({ status: "idle", lease_runtime_id: "rt_b", lease_epoch: 2 });
    expect(after!.rows.events.map((e: { data: string }) => JSON.parse(e.data).text)).toEqual([
      undefined, // session.created
      undefined, // turn.started
      "extended",
      "fenced",
      "status",
      "taken over",
      "fenced rt_b",
    ]);
  });
});
