// The row-level changes a write makes, as one narrow interface with two implementations:
// sql-rows.ts runs each as its statement at once (a store without group commit), and
// deferred-rows.ts records it in the commit journal and keeps it in memory until the group's
// next read or commit (write-behind). BatchWriter (write-batch.ts) decides what to change;
// a RowWriter only changes it. The SQL texts live here, so both implementations journal and run
// exactly the same statements and a replay gives the same rows either way.

import type { Lease } from "@opencomputer/runtime";
import { SESSION_FIELDS, TURN_FIELDS } from "@opencomputer/sql-store";
import type { LeaseRow } from "./lease.ts";

/**
 * What the guards of a write read: [status, last_seq, lease_runtime_id, lease_epoch, status of
 * the expected turn (null when it is missing; undefined without one)].
 */
export type GuardRow = [string, number, string | null, number | null, string | null | undefined];

export interface RowWriter {
  /** The session's guard columns (and a turn's status), or undefined for an unknown session. */
  guard(sessionId: string, turnId: string | undefined): GuardRow | undefined;
  readLease(sessionId: string): LeaseRow | undefined;
  /** The ids of the turn's calls still `started`. */
  openCalls(sessionId: string, turnId: string): string[];
  /** `INSERT_SESSION`'s parameters (rows.ts); a taken id or key is `duplicate`. */
  insertSession(params: unknown[]): void;
  /** INSERT_TURN's parameters; a taken id or idempotency key is `duplicate`. */
  insertTurn(params: unknown[]): void;
  /**
   * `values` are the patched TURN_FIELDS in field order (JSON columns already as text), for the
   * fields whose bit is set in `mask`. An unknown turn is `turn_not_active`.
   */
  updateTurn(sessionId: string, turnId: string, mask: number, values: unknown[], at: string): void;
  /** INSERT_MESSAGE's parameters; a taken id is `duplicate`. */
  insertMessage(params: unknown[]): void;
  /** UPSERT_TOOL_CALL's parameters: the whole row. */
  upsertToolCall(params: unknown[]): void;
  /** `rows` events of one session, EVENT_PARAMS parameters each, seqs already assigned. */
  insertEvents(params: unknown[], rows: number): void;
  /** Sets last_seq and updated_at, bumps the revision, and sets the patched SESSION_FIELDS. */
  updateSession(
    sessionId: string,
    lastSeq: number,
    at: string,
    mask: number,
    values: unknown[],
  ): void;
  setLastSeq(sessionId: string, lastSeq: number): void;
  writeLease(sessionId: string, lease: Lease): void;
}

/** The bit of the `status` field in both masks. */
export const STATUS_BIT = 1;

export const GUARD_SQL =
  "SELECT status, last_seq, lease_runtime_id, lease_epoch FROM sessions WHERE id = ?";
export const GUARD_WITH_TURN_SQL = `SELECT status, last_seq, lease_runtime_id, lease_epoch,
    (SELECT status FROM turns WHERE session_id = ? AND id = ?)
  FROM sessions WHERE id = ?`;

export const INSERT_TURN = `INSERT INTO turns (session_id, id, input, mode, status, outcome, error,
  idempotency_key, steps, created_at, updated_at, started_at, settled_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
/** Positions in INSERT_TURN's parameters. */
export const TURN_PARAM = { sessionId: 0, id: 1, status: 4, idempotencyKey: 7, updatedAt: 10 };
/** INSERT_TURN's columns, in parameter order (the same as TURN_COLUMNS). */
export const TURN_INSERT_COLUMNS = [
  "session_id",
  "id",
  "input",
  "mode",
  "status",
  "outcome",
  "error",
  "idempotency_key",
  "steps",
  "created_at",
  "updated_at",
  "started_at",
  "settled_at",
];

/** Parameters per message row. */
export const MESSAGE_PARAMS = 6;
export const INSERT_MESSAGE = `INSERT INTO messages (session_id, id, turn_id, role, content,
  created_at) VALUES (?, ?, ?, ?, ?, ?)`;

// ON CONFLICT DO UPDATE keeps the row (and its rowid, the insertion order) in place.
export const UPSERT_TOOL_CALL = `INSERT INTO tool_calls (session_id, call_id, turn_id, message_id,
  tool, input, status, output, error, attempts, started_at, settled_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (session_id, call_id) DO UPDATE SET turn_id = excluded.turn_id,
    message_id = excluded.message_id, tool = excluded.tool, input = excluded.input,
    status = excluded.status, output = excluded.output, error = excluded.error,
    attempts = excluded.attempts, started_at = excluded.started_at,
    settled_at = excluded.settled_at`;

export const OPEN_CALLS =
  "SELECT call_id FROM tool_calls WHERE session_id = ? AND turn_id = ? AND status = 'started'";

export const SET_LAST_SEQ = "UPDATE sessions SET last_seq = ? WHERE id = ?";

/** Parameters per event row, and rows per INSERT (a statement run has a fixed cost rows share). */
export const EVENT_PARAMS = 7;
export const EVENT_CHUNK = 32;

/** Caches an SQL text per key (row count or patch mask): built once, then looked up. */
function cachedSql(build: (key: number) => string): (key: number) => string {
  const cache: string[] = [];
  return (key) => {
    cache[key] ??= build(key);
    return cache[key];
  };
}

const multiRow = (head: string, row: string) =>
  cachedSql((rows) => `${head} VALUES ${Array.from({ length: rows }, () => row).join(", ")}`);

/** The multi-row event INSERT for `rows` rows. */
export const insertEventsSql = multiRow(
  "INSERT INTO events (session_id, seq, id, timestamp, turn_id, type, data)",
  "(?, ?, ?, ?, ?, ?, ?)",
);

/** The multi-row message INSERT for `rows` rows. */
export const insertMessagesSql = multiRow(
  "INSERT INTO messages (session_id, id, turn_id, role, content, created_at)",
  "(?, ?, ?, ?, ?, ?)",
);

/** `<head>, <column of each field whose bit is set> = ? <tail>`. */
const maskedUpdate = (
  head: string,
  fields: readonly (readonly [string, string, boolean])[],
  tail: string,
) =>
  cachedSql((mask) => {
    let sql = head;
    for (let i = 0; i < fields.length; i++) if (mask & (1 << i)) sql += `, ${fields[i]![1]} = ?`;
    return `${sql} ${tail}`;
  });

/** `UPDATE turns SET updated_at = ?, <masked fields> WHERE session_id = ? AND id = ?`. */
export const updateTurnSql = maskedUpdate(
  "UPDATE turns SET updated_at = ?",
  TURN_FIELDS,
  "WHERE session_id = ? AND id = ?",
);

/** `UPDATE sessions SET last_seq = ?, revision = revision + 1, updated_at = ?, <masked> WHERE id = ?`. */
export const updateSessionSql = maskedUpdate(
  "UPDATE sessions SET last_seq = ?, revision = revision + 1, updated_at = ?",
  SESSION_FIELDS,
  "WHERE id = ?",
);

/** The column a turn field is stored in, and its position among INSERT_TURN's parameters. */
export const TURN_FIELD_PARAM: readonly number[] = TURN_FIELDS.map(([, column]) =>
  TURN_INSERT_COLUMNS.indexOf(column),
);

/** Positions in INSERT_SESSION's parameters (rows.ts `sessionParams`). */
export const SESSION_PARAM = {
  id: 0,
  status: 4,
  revision: 11,
  lastSeq: 12,
  idempotencyKey: 13,
  leaseRuntimeId: 14,
  leaseEpoch: 15,
  leaseExpiresAt: 16,
  updatedAt: 18,
};
/** The position of each SESSION_FIELDS column among INSERT_SESSION's parameters. */
export const SESSION_FIELD_PARAM: readonly number[] = [4, 8, 9, 10, 6];

/** INSERT_SESSION's columns, in parameter order. */
export const SESSION_INSERT_COLUMNS = [
  "id",
  "agent_id",
  "deployment_id",
  "environment",
  "status",
  "source",
  "labels",
  "execution_mode",
  "result",
  "question",
  "runtime",
  "revision",
  "last_seq",
  "idempotency_key",
  "lease_runtime_id",
  "lease_epoch",
  "lease_expires_at",
  "created_at",
  "updated_at",
  "project_id",
];

/** A row object (as SQLite would return it) from an INSERT's parameters. */
export function rowOf<R>(columns: readonly string[], params: readonly unknown[]): R {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) row[columns[i]!] = params[i];
  return row as R;
}
