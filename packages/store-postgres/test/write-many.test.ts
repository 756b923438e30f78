// Writes of several sessions in one tick share a call of `oc_write_many` (src/write-many.ts).
// Checked against the writes sent alone: the same scripts, run by many sessions at once, on a
// store that combines and on one that does not, give every write the same result or error and
// leave the same rows; and the combined store did send shared calls, some of which fell back.
import type { Store, WriteBatch } from "@opencomputer/runtime";
import { withClient } from "@opencomputer/testkit/postgres-cluster";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { createdEvents, sessionRecord, turnRecord } from "@opencomputer/testkit/store-conformance";
import {
  ev,
  messageRecord,
  OLD,
  resultRecord,
  toolCallRecord,
} from "@opencomputer/testkit/store-fixtures";
import { describe, expect, it } from "vitest";
import { createPostgresStore } from "../src/index.ts";

const cluster = usePrivateCluster();
const TTL = 60_000;
const SESSIONS = 8;

/** What a call gave: its value without the parts each run makes up, or its error. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await call();
    return JSON.parse(
      JSON.stringify(value ?? null, (key, v) =>
        ["id", "timestamp", "expiresAt", "sessionId"].includes(key) ? undefined : v,
      ),
    );
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { code, message: message.replaceAll(/ses_\d+/g, "ses") };
  }
}

/**
 * One session's writes: claims, fenced writes with every kind of op a combined call takes, a
 * settle with all guards, refusals of each kind (on odd sessions only, so that refused and
 * accepted writes share calls), a write that cannot be combined, and a lost claim.
 */
function script(store: Store, sessionId: string, i: number): (() => Promise<unknown>)[] {
  const turn = turnRecord(sessionId, { id: `turn_${i}`, status: "running" });
  const call = toolCallRecord(sessionId, turn.id, { callId: `call_${i}` });
  // Settled: the open-calls guard must leave it out.
  const done = toolCallRecord(sessionId, turn.id, {
    callId: `call_${i}_done`,
    status: "completed",
  });
  const fence = { runtimeId: "rt_a", epoch: 1 };
  const note = (text: string) => ev("message.created", { text }, turn.id);
  const write = (batch: Partial<WriteBatch>) =>
    outcome(() => store.apply(sessionId, { ops: [], events: [], ...batch }));
  const claim = (runtimeId: string, batch: Partial<WriteBatch>) =>
    outcome(() =>
      store.applyWithLease(sessionId, runtimeId, TTL, { ops: [], events: [], ...batch }),
    );
  const odd = i % 2 === 1;
  const queued = turnRecord(sessionId, { id: `turn_${i}_b` });
  const usage = { provider: "p", model: "m", inputTokens: i, costUsd: 0.5 };
  const result = { turnId: turn.id, callId: call.callId, reportedAt: OLD, data: { n: i } };
  return [
    () => claim("rt_a", { ops: [{ type: "turn.insert", turn }], events: [note("start")] }),
    () =>
      write({
        fence,
        expectTurn: { id: turn.id, status: ["running"] },
        ops: [
          { type: "message.insert", message: messageRecord(sessionId, turn.id, `msg_${i}`) },
          { type: "toolCall.upsert", call },
          { type: "toolCall.upsert", call: done },
          { type: "turn.update", id: turn.id, patch: { steps: 1 } },
          { type: "session.update", patch: { status: "running", labels: { n: String(i) } } },
        ],
        events: [ev("usage.recorded", usage, turn.id), note("step")],
      }),
    () => write({ fence: odd ? { runtimeId: "rt_a", epoch: 0 } : fence, events: [note("f")] }),
    () =>
      write({
        fence,
        expectOpenCalls: { turnId: turn.id, callIds: odd ? ["call_other"] : [call.callId] },
        events: [note("calls")],
      }),
    () => write({ expectSession: { status: odd ? ["idle"] : ["running"] }, events: [note("s")] }),
    () =>
      write({
        ops: [{ type: "turn.update", id: odd ? "turn_missing" : turn.id, patch: { steps: 2 } }],
        events: [note("missing turn")],
      }),
    // Two ops on one turn: this write goes alone.
    () =>
      write({
        ops: [
          { type: "turn.insert", turn: queued },
          { type: "turn.update", id: queued.id, patch: { status: "cancelled" } },
        ],
        events: [],
      }),
    () =>
      write({
        fence,
        expectTurn: { id: turn.id, status: ["running"] },
        expectSession: { status: ["running"] },
        expectOpenCalls: { turnId: turn.id, callIds: [call.callId] },
        ops: [
          { type: "toolCall.upsert", call: { ...call, status: "completed", output: { ok: i } } },
          {
            type: "result.insert",
            record: resultRecord(sessionId, turn.id, { resultId: `r_${i}` }),
          },
          { type: "turn.update", id: turn.id, patch: { status: "completed" } },
          { type: "session.update", patch: { status: "idle", result } },
        ],
        events: [ev("turn.completed", {}, turn.id)],
      }),
    () => claim("rt_b", { events: [note("lost: rt_a holds the lease")] }),
  ];
}

/** Every row the writes touch, in a stable order, without what each run makes up. */
async function rows(url: string) {
  return withClient(url, async (client) => {
    const all = async (sql: string) => (await client.query(sql)).rows;
    return {
      sessions: await all(`SELECT status, revision::int, last_seq::int, lease_runtime_id,
          lease_epoch::int, result::text, labels::text, label_index::text FROM sessions
          ORDER BY id`),
      events: await all(`SELECT session_id, seq::int, type, turn_id, data::text FROM events
          ORDER BY session_id, seq`),
      turns: await all(
        "SELECT session_id, id, status, outcome, steps FROM turns ORDER BY session_id, rid",
      ),
      messages: await all("SELECT session_id, id, content::text FROM messages ORDER BY rid"),
      calls: await all(`SELECT session_id, call_id, status, output::text FROM tool_calls
          ORDER BY session_id, rid`),
      results: await all("SELECT session_id, result_id, data::text FROM results ORDER BY rid"),
      usage: await all(`SELECT session_id, seq::int, input_tokens::int, cost_usd FROM usage_steps
          ORDER BY session_id, seq`),
    };
  });
}

describe("writes of one tick in one call of oc_write_many", () => {
  it("answers every write as alone and leaves the same rows; shared calls ran", async () => {
    const runs = [];
    for (const combineWrites of [false, true]) {
      const url = cluster().connectionString(await cluster().createDatabase());
      await withClient(url, async (client) => {
        const { rows: db } = await client.query("SELECT current_database() AS name");
        await client.query(`ALTER DATABASE ${db[0].name} SET track_functions = 'all'`);
      });
      const store = await createPostgresStore({ connectionString: url, combineWrites });
      try {
        const sessions = Array.from({ length: SESSIONS }, (_, i) =>
          sessionRecord({ id: `ses_${1000 + i}` }),
        );
        for (const s of sessions) await store.createSession(s, createdEvents(s));
        // Step by step, each step of every session asked for in the same tick.
        const scripts = sessions.map((s, i) => script(store, s.id, i));
        const results: unknown[][] = sessions.map(() => []);
        for (let k = 0; k < scripts[0]!.length; k++) {
          const done = await Promise.all(scripts.map((steps) => steps[k]!()));
          for (let i = 0; i < done.length; i++) results[i]!.push(done[i]);
        }
        runs.push({ url, results, rows: await rows(url) });
      } finally {
        await store.close();
      }
    }
    // A backend reports its function calls as it exits, before it leaves pg_stat_activity.
    const callsOn = (url: string) =>
      withClient(url, async (client) => {
        const others = `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`;
        await expect.poll(async () => (await client.query(others)).rows[0].n).toBe(0);
        const { rows: fns } = await client.query(
          "SELECT funcname, calls::int FROM pg_stat_user_functions",
        );
        return Object.fromEntries(fns.map((f) => [f.funcname, f.calls])) as Record<
          string,
          number | undefined
        >;
      });
    const [alone, combined] = runs;
    expect(combined!.results).toEqual(alone!.results);
    expect(combined!.rows).toEqual(alone!.rows);
    // PostgreSQL counts the calls that returned: three steps (the claim, the step, the settle)
    // had every session's write accepted, each one shared call instead of eight; in every other
    // step a write was refused or cannot be shared, so the writes went (or went again) alone.
    // (A call is counted again when a refusal in its SyncGroup sent it a second time.)
    const [callsAlone, callsCombined] = [await callsOn(alone!.url), await callsOn(combined!.url)];
    expect(callsAlone.oc_write_many).toBeUndefined();
    expect(callsCombined.oc_write_many).toBe(3);
    expect(callsCombined.oc_write).toBeLessThan(callsAlone.oc_write!);
    // What both did is what the store promises, so the comparison is not of two failures.
    const codes = (i: number) =>
      combined!.results[i]!.map((r) => (r as { code?: string } | null)?.code ?? "ok");
    expect(codes(0)).toEqual(["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"]);
    expect(codes(1)).toEqual([
      "ok",
      "ok",
      "stale_epoch",
      "calls_changed",
      "session_state",
      "turn_not_active",
      "ok",
      "ok",
      "ok",
    ]);
    expect(combined!.results[0]![8]).toBeNull();
    const last = combined!.rows.sessions[0];
    expect(last).toMatchObject({ status: "idle", lease_runtime_id: "rt_a", lease_epoch: 1 });
    expect(combined!.rows.usage).toHaveLength(SESSIONS);
    expect(combined!.rows.results).toHaveLength(SESSIONS);
  });
});
