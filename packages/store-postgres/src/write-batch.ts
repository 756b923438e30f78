// One WriteBatch inside a transaction the caller opened, after it locked the session row
// (`lockSession`, SELECT ... FOR UPDATE): that lock serialises all writers of the session, so
// the guards read a state nobody can change before COMMIT. Guards first (fence, expectTurn,
// expectSession, expectOpenCalls), then the ops in order, then the events with the next seqs
// (invariant 1). Any throw makes the caller roll the whole batch back. Each statement is a
// round trip, so what can share one does: the turn guard's read rides on the lock, and the
// events, the session row and the NOTIFY go in the batch's last statement.

import { randomBytes } from "node:crypto";
import {
  type EventRecord,
  isoNow,
  type Lease,
  type NewEvent,
  queuesWork,
  type SessionPatch,
  StoreError,
  type TurnPatch,
  type WriteBatch,
} from "@opencomputer/runtime";
import {
  mergePatch,
  ownedBy,
  RESULT_INSERT_COLUMNS,
  resultValues,
  SESSION_FIELDS,
  TURN_FIELDS,
  turnUpdateRun,
} from "@opencomputer/sql-store";
import type pg from "pg";
import { insertApproval, updateApproval } from "./approvals.ts";
import { labelIndex } from "./label-index.ts";
import type { LeaseState } from "./lease.ts";
import { encodePayload } from "./notify.ts";
import { toJson } from "./rows.ts";

const INSERT_RESULT = `INSERT INTO results (${RESULT_INSERT_COLUMNS.join(", ")})
  VALUES (${RESULT_INSERT_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`;

/** What the guards need from the locked session row. */
export interface LockedSession extends LeaseState {
  status: string;
  lastSeq: number;
  /** The turn `lockSession` was asked about, as of the lock; status null when there is none. */
  turn?: { id: string; status: string | null };
}

interface LockRow {
  status: string;
  last_seq: string;
  lease_runtime_id: string | null;
  lease_epoch: string | null;
  lease_expires_at: string | null;
  turn_status?: string | null;
  unchanged?: boolean | null;
}

const LOCK = `SELECT status, last_seq, lease_runtime_id, lease_epoch, lease_expires_at
  FROM sessions WHERE id = $1 FOR UPDATE`;

// The subselects read the statement's snapshot, taken before the lock was granted. A writer
// that committed in between leaves a newer session row version, which FOR UPDATE returns, so
// an unchanged xmin proves no such writer; every write of a turn also updates the session row
// (writeBatch always does when it inserts or updates one), so then the turn read is current.
const LOCK_WITH_TURN = `SELECT s.status, s.last_seq, s.lease_runtime_id, s.lease_epoch,
    s.lease_expires_at,
    (SELECT t.status FROM turns t WHERE t.session_id = $1 AND t.id = $2) AS turn_status,
    s.xmin = (SELECT v.xmin FROM sessions v WHERE v.id = $1) AS unchanged
  FROM sessions s WHERE s.id = $1 FOR UPDATE OF s`;

/**
 * Locks the session row for the rest of the transaction; session_not_found when missing. With
 * `turnId` it also reads that turn's status for the expectTurn guard, when it can vouch for it.
 */
export async function lockSession(
  client: pg.ClientBase,
  sessionId: string,
  turnId?: string,
): Promise<LockedSession> {
  const { rows } =
    turnId === undefined
      ? await client.query<LockRow>(LOCK, [sessionId])
      : await client.query<LockRow>(LOCK_WITH_TURN, [sessionId, turnId]);
  const row = rows[0];
  if (row === undefined) throw new StoreError("session_not_found", `No session ${sessionId}.`);
  const locked: LockedSession = {
    status: row.status,
    lastSeq: Number(row.last_seq),
    holder: row.lease_runtime_id,
    epoch: Number(row.lease_epoch ?? 0),
    expiresAt: Number(row.lease_expires_at ?? 0),
  };
  if (turnId !== undefined && row.unchanged === true) {
    locked.turn = { id: turnId, status: row.turn_status ?? null };
  }
  return locked;
}

/** What the batch's last statement writes besides the batch itself. */
export interface BatchEnd {
  /** The NOTIFY channel (notify.ts), or null to send none. */
  channel: string | null;
  /** A lease to record on the session (applyWithLease). */
  lease?: Lease;
}

export async function writeBatch(
  client: pg.ClientBase,
  sessionId: string,
  locked: LockedSession,
  batch: WriteBatch,
  end: BatchEnd,
): Promise<EventRecord[]> {
  await checkGuards(client, sessionId, locked, batch);

  const timestamp = isoNow();
  let touched = false;
  let sessionPatch: SessionPatch | undefined;
  const ops = batch.ops;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    switch (op.type) {
      case "session.update":
        touched = true;
        sessionPatch = sessionPatch === undefined ? op.patch : mergePatch(sessionPatch, op.patch);
        break;
      case "turn.insert": {
        const t = op.turn;
        ownedBy(t.sessionId, sessionId, "turn", t.id);
        await client.query(
          `INSERT INTO turns (session_id, id, input, mode, status, outcome, error,
             idempotency_key, steps, created_at, updated_at, started_at, settled_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
          [
            sessionId,
            t.id,
            toJson(t.input),
            t.mode,
            t.status,
            t.outcome,
            toJson(t.error),
            t.idempotencyKey,
            t.steps,
            t.createdAt,
            t.updatedAt,
            t.startedAt,
            t.settledAt,
          ],
        );
        // LOCK_WITH_TURN relies on this: no write of a turn leaves the session row as it was.
        touched = true;
        break;
      }
      case "turn.update": {
        // Updates of one turn in a row are one UPDATE (batch-ops.ts).
        const run = turnUpdateRun(ops, i);
        i = run.last;
        await updateTurn(client, sessionId, run.id, run.patch, timestamp);
        touched = true;
        break;
      }
      case "message.insert": {
        const m = op.message;
        ownedBy(m.sessionId, sessionId, "message", m.id);
        await client.query(
          `INSERT INTO messages (session_id, id, turn_id, role, content, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [sessionId, m.id, m.turnId, m.role, toJson(m.content), m.createdAt],
        );
        break;
      }
      case "toolCall.upsert": {
        const c = op.call;
        ownedBy(c.sessionId, sessionId, "tool call", c.callId);
        // ON CONFLICT DO UPDATE keeps the row (and its rid, the insertion order) in place.
        await client.query(
          `INSERT INTO tool_calls (session_id, call_id, turn_id, message_id, tool, input, status,
             output, error, attempts, started_at, settled_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
           ON CONFLICT (session_id, call_id) DO UPDATE SET turn_id = EXCLUDED.turn_id,
             message_id = EXCLUDED.message_id, tool = EXCLUDED.tool, input = EXCLUDED.input,
             status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
             attempts = EXCLUDED.attempts, started_at = EXCLUDED.started_at,
             settled_at = EXCLUDED.settled_at`,
          [
            sessionId,
            c.callId,
            c.turnId,
            c.messageId,
            c.tool,
            toJson(c.input),
            c.status,
            toJson(c.output),
            c.error,
            c.attempts,
            c.startedAt,
            c.settledAt,
          ],
        );
        break;
      }
      case "result.insert": {
        const r = op.record;
        ownedBy(r.sessionId, sessionId, "result", r.resultId);
        await client.query(INSERT_RESULT, resultValues(r, toJson));
        break;
      }
      case "approval.insert":
        ownedBy(op.approval.sessionId, sessionId, "approval", op.approval.id);
        await insertApproval(client, op.approval);
        break;
      case "approval.update":
        await updateApproval(client, sessionId, op.id, op.expect, op.patch, timestamp);
        break;
      default:
        throw new StoreError(
          "invalid_batch",
          `Unknown write op ${(op as { type?: unknown }).type}.`,
        );
    }
  }

  const events = numberEvents(sessionId, locked.lastSeq, timestamp, batch.events);
  await finishBatch(
    client,
    sessionId,
    events,
    touched ? { timestamp, patch: sessionPatch } : null,
    end,
  );
  return events;
}

/** Throws the refusal of the first guard that fails, in the port's order. */
async function checkGuards(
  client: pg.ClientBase,
  sessionId: string,
  locked: LockedSession,
  batch: WriteBatch,
): Promise<void> {
  const { fence, expectTurn, expectSession, expectOpenCalls } = batch;
  if (fence !== undefined && (locked.holder !== fence.runtimeId || locked.epoch !== fence.epoch)) {
    throw new StoreError(
      "stale_epoch",
      `Session ${sessionId} is leased to ${locked.holder ?? "nobody"} at epoch ${locked.epoch}; ` +
        `the write was fenced with ${fence.runtimeId} at epoch ${fence.epoch}.`,
    );
  }
  if (expectTurn !== undefined) {
    const status =
      locked.turn?.id === expectTurn.id
        ? locked.turn.status
        : await turnStatus(client, sessionId, expectTurn.id);
    if (status === null || !(expectTurn.status as readonly string[]).includes(status)) {
      throw new StoreError(
        "turn_not_active",
        status === null
          ? `Session ${sessionId} has no turn ${expectTurn.id}.`
          : `Turn ${expectTurn.id} is ${status}, expected ${expectTurn.status.join(" or ")}.`,
      );
    }
  }
  if (
    expectSession !== undefined &&
    !(expectSession.status as readonly string[]).includes(locked.status)
  ) {
    throw new StoreError(
      "session_state",
      `Session ${sessionId} is ${locked.status}, expected ${expectSession.status.join(" or ")}.`,
    );
  }
  if (expectOpenCalls !== undefined) {
    const { rows } = await client.query<{ call_id: string }>(
      `SELECT call_id FROM tool_calls
       WHERE session_id = $1 AND turn_id = $2 AND status = 'started'`,
      [sessionId, expectOpenCalls.turnId],
    );
    const open = rows.map((r) => r.call_id);
    const want = new Set(expectOpenCalls.callIds);
    if (open.length !== want.size || open.some((id) => !want.has(id))) {
      throw new StoreError(
        "calls_changed",
        `Turn ${expectOpenCalls.turnId} has open calls [${open.join(", ")}], expected ` +
          `[${[...want].join(", ")}].`,
      );
    }
  }
}

async function turnStatus(
  client: pg.ClientBase,
  sessionId: string,
  turnId: string,
): Promise<string | null> {
  const { rows } = await client.query<{ status: string }>(
    "SELECT status FROM turns WHERE session_id = $1 AND id = $2",
    [sessionId, turnId],
  );
  return rows[0]?.status ?? null;
}

/** `events` as recorded with the seqs after `lastSeq`. */
export function numberEvents(
  sessionId: string,
  lastSeq: number,
  timestamp: string,
  events: readonly NewEvent[],
): EventRecord[] {
  return events.map((e, i): EventRecord => {
    const seq = lastSeq + i + 1;
    // Ids only need to be unique; 96 random bits are.
    const id = `evt_${randomBytes(12).toString("hex")}`;
    return (
      e.turnId === undefined
        ? { seq, id, timestamp, sessionId, type: e.type, data: e.data }
        : { seq, id, timestamp, sessionId, turnId: e.turnId, type: e.type, data: e.data }
    ) as EventRecord;
  });
}

/**
 * The INSERT of `events` (all of one session and timestamp), its values added to `params`;
 * with `onlyIf`, a condition on the rest of the statement, it inserts nothing when that fails.
 */
export function insertEvents(
  params: unknown[],
  events: readonly EventRecord[],
  onlyIf?: string,
): string {
  const param = (value: unknown) => `$${params.push(value)}`;
  const column = (pick: (e: EventRecord) => unknown) => param(events.map(pick));
  const first = events[0]!;
  // One statement for the whole batch: parallel arrays unnested into rows.
  return `INSERT INTO events (session_id, seq, id, timestamp, turn_id, type, data)
    SELECT ${param(first.sessionId)}, e.seq, e.id, ${param(first.timestamp)}, e.turn_id, e.type,
      e.data::json
    FROM unnest(${column((e) => e.seq)}::bigint[], ${column((e) => e.id)}::text[],
      ${column((e) => e.turnId ?? null)}::text[], ${column((e) => e.type)}::text[],
      ${column((e) => toJson(e.data))}::text[]) AS e(seq, id, turn_id, type, data)
    ${onlyIf === undefined ? "" : `WHERE ${onlyIf}`}`;
}

/**
 * The batch's last statement, when it has anything to write: the session row (the last seq of
 * the events; when `touched`, the revision bumped once for the batch, the time and the patch;
 * the lease of `end`), with the events appended by a CTE and the commit's NOTIFY queued in its
 * RETURNING. A data-modifying CTE always runs to completion, and the UPDATE matches exactly the
 * row the transaction holds locked, so the NOTIFY is queued once, as a separate SELECT was.
 */
async function finishBatch(
  client: pg.ClientBase,
  sessionId: string,
  events: readonly EventRecord[],
  touched: { timestamp: string; patch: SessionPatch | undefined } | null,
  end: BatchEnd,
): Promise<void> {
  const params: unknown[] = [sessionId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const sets: string[] = [];
  const last = events[events.length - 1];
  if (last !== undefined) sets.push(`last_seq = ${param(last.seq)}`);
  if (touched !== null) {
    const { timestamp, patch } = touched;
    sets.push("revision = revision + 1", `updated_at = ${param(timestamp)}`);
    for (const [key, column, json] of SESSION_FIELDS) {
      const value = patch?.[key];
      if (value !== undefined) sets.push(`${column} = ${param(json ? toJson(value) : value)}`);
    }
    if (patch?.labels !== undefined) sets.push(`label_index = ${param(labelIndex(patch.labels))}`);
  }
  if (end.lease !== undefined) {
    const { runtimeId, epoch, expiresAt } = end.lease;
    sets.push(
      `lease_runtime_id = ${param(runtimeId)}`,
      `lease_epoch = ${param(epoch)}`,
      `lease_expires_at = ${param(expiresAt)}`,
    );
  }
  if (sets.length === 0) return;
  let sql = `UPDATE sessions SET ${sets.join(", ")} WHERE id = $1`;
  if (last !== undefined) {
    sql = `WITH appended AS (${insertEvents(params, events)}) ${sql}`;
    if (end.channel !== null) {
      const payload = encodePayload(sessionId, last.seq, queuesWork(events));
      sql += ` RETURNING pg_notify(${param(end.channel)}, ${param(payload)})`;
    }
  }
  await client.query(sql, params);
}

async function updateTurn(
  client: pg.ClientBase,
  sessionId: string,
  turnId: string,
  patch: TurnPatch,
  timestamp: string,
): Promise<void> {
  const params: unknown[] = [sessionId, turnId, timestamp];
  let sql = "UPDATE turns SET updated_at = $3";
  for (const [key, column, json] of TURN_FIELDS) {
    const value = patch[key];
    if (value === undefined) continue;
    params.push(json ? toJson(value) : value);
    sql += `, ${column} = $${params.length}`;
  }
  const { rowCount } = await client.query(`${sql} WHERE session_id = $1 AND id = $2`, params);
  if (rowCount === 0) {
    throw new StoreError("turn_not_active", `Session ${sessionId} has no turn ${turnId}.`);
  }
}
