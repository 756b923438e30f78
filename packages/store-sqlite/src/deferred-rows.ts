// Write-behind for group commit: a write's row changes are appended to the commit journal (which
// makes them durable before the store returns, as before) and kept in memory (pending-rows.ts);
// SQLite runs them, merged, before the group's next read or its commit. The guards a write
// checks (session status, lease, last seq, a turn's status) and the keys it must not reuse are
// answered from what this group has already read or written.
//
// Why this is exact: a group holds SQLite's write lock (BEGIN IMMEDIATE) from its first write to
// its commit, so nothing but this connection changes the database meanwhile, and what it
// remembers stays true until the group ends (`reset`). Anything it does not remember is read from
// SQLite directly: a row it has not seen has no pending change, so the database's copy is
// current. Every other statement (reads, and the rarer writes that run at once: results,
// approvals, keyed turns, lease renewals) makes the pending rows run first (GroupCommit's
// beforeRead), so it sees every change before it in order.
//
// What can no longer fail later: a pending row is only kept once its guards passed and its
// unique keys were checked here, so running it cannot break a constraint. Should it fail all the
// same (a full disk), the group is rolled back and the journal, which holds every acknowledged
// change, is replayed (GroupCommit).

import { type Lease, StoreError } from "@opencomputer/runtime";
import { SESSION_FIELDS, TURN_FIELDS } from "@opencomputer/sql-store";
import type Database from "better-sqlite3";
import type { RecordBuilder } from "./journal-codec.ts";
import { type LeaseRow, WRITE_LEASE } from "./lease.ts";
import type { PendingRows } from "./pending-rows.ts";
import {
  type GuardRow,
  INSERT_MESSAGE,
  INSERT_TURN,
  insertEventsSql,
  OPEN_CALLS,
  type RowWriter,
  SESSION_FIELD_PARAM,
  SESSION_PARAM,
  SET_LAST_SEQ,
  STATUS_BIT,
  TURN_FIELD_PARAM,
  TURN_PARAM,
  UPSERT_TOOL_CALL,
  updateSessionSql,
  updateTurnSql,
} from "./row-writer.ts";
import { INSERT_SESSION } from "./rows.ts";
import type { StatementCache } from "./statements.ts";

/** What the group knows of one session. */
interface SessionMemo {
  status: string;
  lastSeq: number;
  holder: string | null;
  epoch: number | null;
  expiresAt: number | null;
  /** Created in this group: every row of it is known here, so a missing id is free. */
  fresh: boolean;
  /** Turn id → status, for the turns this group has read or written. */
  turns: Map<string, string>;
  /** Message ids this group has written. */
  messages: Set<string>;
}

type SessionProbe = [string, number, string | null, number | null, number | null];

export class DeferredRowWriter implements RowWriter {
  private readonly memo = new Map<string, SessionMemo>();
  // Prepared on the connection directly, so they do not make the pending rows run: they only
  // read rows the group has no pending change of (see above).
  private readonly probeSession: Database.Statement;
  private readonly probeSessionId: Database.Statement;
  private readonly probeTurn: Database.Statement;
  private readonly probeMessage: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly statements: StatementCache,
    private readonly pending: PendingRows,
  ) {
    this.probeSession = db
      .prepare(
        `SELECT status, last_seq, lease_runtime_id, lease_epoch, lease_expires_at
         FROM sessions WHERE id = ?`,
      )
      .raw();
    this.probeSessionId = db.prepare("SELECT 1 FROM sessions WHERE id = ?").pluck();
    this.probeTurn = db.prepare("SELECT status FROM turns WHERE session_id = ? AND id = ?").pluck();
    this.probeMessage = db
      .prepare("SELECT 1 FROM messages WHERE session_id = ? AND id = ?")
      .pluck();
  }

  /** The group ended (committed or rolled back): what it knew may change now. */
  reset(): void {
    this.memo.clear();
  }

  /** Forgets one session after a statement changed its row at once (lease renewal, release). */
  forget(sessionId: string): void {
    this.memo.delete(sessionId);
  }

  guard(sessionId: string, turnId: string | undefined): GuardRow | undefined {
    const m = this.session(sessionId);
    if (m === undefined) return undefined;
    const turnStatus =
      turnId === undefined ? undefined : (this.turnStatus(m, sessionId, turnId) ?? null);
    return [m.status, m.lastSeq, m.holder, m.epoch, turnStatus];
  }

  readLease(sessionId: string): LeaseRow | undefined {
    const m = this.session(sessionId);
    if (m === undefined) return undefined;
    return {
      lease_runtime_id: m.holder,
      lease_epoch: m.epoch,
      lease_expires_at: m.expiresAt,
    };
  }

  openCalls(sessionId: string, turnId: string): string[] {
    return (
      this.pending.openCallIds(sessionId, turnId) ??
      (this.statements.get(OPEN_CALLS, sessionId).pluck().all(sessionId, turnId) as string[])
    );
  }

  insertSession(params: unknown[]): void {
    const id = params[SESSION_PARAM.id] as string;
    if (this.memo.has(id) || this.probeSessionId.get(id) !== undefined) {
      throw duplicate("sessions.id", id);
    }
    this.journal(INSERT_SESSION, params);
    this.pending.insertSession(params);
    this.memo.set(id, {
      status: params[SESSION_PARAM.status] as string,
      lastSeq: params[SESSION_PARAM.lastSeq] as number,
      holder: params[SESSION_PARAM.leaseRuntimeId] as string | null,
      epoch: params[SESSION_PARAM.leaseEpoch] as number | null,
      expiresAt: params[SESSION_PARAM.leaseExpiresAt] as number | null,
      fresh: true,
      turns: new Map(),
      messages: new Set(),
    });
  }

  insertTurn(params: unknown[]): void {
    const sessionId = params[TURN_PARAM.sessionId] as string;
    const id = params[TURN_PARAM.id] as string;
    const status = params[TURN_PARAM.status] as string;
    const m = this.known(sessionId);
    if (params[TURN_PARAM.idempotencyKey] !== null) {
      // The key's uniqueness is SQLite's to check: run it now, after the pending rows.
      this.statements.get(INSERT_TURN, sessionId).run(params);
      m.turns.set(id, status);
      return;
    }
    if (this.turnStatus(m, sessionId, id) !== undefined) throw duplicate("turns.id", id);
    this.journal(INSERT_TURN, params);
    this.pending.insertTurn(params);
    m.turns.set(id, status);
  }

  updateTurn(sessionId: string, turnId: string, mask: number, values: unknown[], at: string) {
    const m = this.known(sessionId);
    if (this.turnStatus(m, sessionId, turnId) === undefined) {
      throw new StoreError("turn_not_active", `Session ${sessionId} has no turn ${turnId}.`);
    }
    this.journal(updateTurnSql(mask), [at, ...values, sessionId, turnId]);
    const { columns, positions, set } = patched(TURN_FIELDS, TURN_FIELD_PARAM, mask, values, {
      columns: ["updated_at"],
      positions: [TURN_PARAM.updatedAt],
      set: [at],
    });
    this.pending.updateTurn(sessionId, turnId, columns, positions, set);
    if (mask & STATUS_BIT) m.turns.set(turnId, values[0] as string);
  }

  insertMessage(params: unknown[]): void {
    const sessionId = params[0] as string;
    const id = params[1] as string;
    const m = this.known(sessionId);
    if (m.messages.has(id) || (!m.fresh && this.probeMessage.get(sessionId, id) !== undefined)) {
      throw duplicate("messages.id", id);
    }
    this.journal(INSERT_MESSAGE, params);
    this.pending.insertMessage(params);
    m.messages.add(id);
  }

  upsertToolCall(params: unknown[]): void {
    this.journal(UPSERT_TOOL_CALL, params);
    this.pending.upsertToolCall(params);
  }

  insertEvents(params: unknown[], rows: number): void {
    this.journal(insertEventsSql(rows), params);
    this.pending.insertEvents(params);
  }

  updateSession(sessionId: string, lastSeq: number, at: string, mask: number, values: unknown[]) {
    const m = this.known(sessionId);
    this.journal(updateSessionSql(mask), [lastSeq, at, ...values, sessionId]);
    const { columns, positions, set } = patched(SESSION_FIELDS, SESSION_FIELD_PARAM, mask, values, {
      columns: ["last_seq", "updated_at"],
      positions: [SESSION_PARAM.lastSeq, SESSION_PARAM.updatedAt],
      set: [lastSeq, at],
    });
    this.pending.updateSession(sessionId, columns, positions, set, true);
    m.lastSeq = lastSeq;
    if (mask & STATUS_BIT) m.status = values[0] as string;
  }

  setLastSeq(sessionId: string, lastSeq: number): void {
    const m = this.known(sessionId);
    this.journal(SET_LAST_SEQ, [lastSeq, sessionId]);
    this.pending.updateSession(sessionId, LAST_SEQ, LAST_SEQ_AT, [lastSeq], false);
    m.lastSeq = lastSeq;
  }

  writeLease(sessionId: string, lease: Lease): void {
    const m = this.known(sessionId);
    this.journal(WRITE_LEASE, [lease.runtimeId, lease.epoch, lease.expiresAt, sessionId]);
    this.pending.updateSession(
      sessionId,
      LEASE_COLUMNS,
      LEASE_AT,
      [lease.runtimeId, lease.epoch, lease.expiresAt],
      false,
    );
    m.holder = lease.runtimeId;
    m.epoch = lease.epoch;
    m.expiresAt = lease.expiresAt;
  }

  private session(sessionId: string): SessionMemo | undefined {
    let m = this.memo.get(sessionId);
    if (m !== undefined) return m;
    const row = this.probeSession.get(sessionId) as SessionProbe | undefined;
    if (row === undefined) return undefined;
    m = {
      status: row[0],
      lastSeq: row[1],
      holder: row[2],
      epoch: row[3],
      expiresAt: row[4],
      fresh: false,
      turns: new Map(),
      messages: new Set(),
    };
    this.memo.set(sessionId, m);
    return m;
  }

  /** A session the write's guards already found. */
  private known(sessionId: string): SessionMemo {
    const m = this.session(sessionId);
    if (m === undefined) throw new StoreError("session_not_found", `No session ${sessionId}.`);
    return m;
  }

  private turnStatus(m: SessionMemo, sessionId: string, turnId: string): string | undefined {
    let status = m.turns.get(turnId);
    if (status === undefined && !m.fresh) {
      status = this.probeTurn.get(sessionId, turnId) as string | undefined;
      if (status !== undefined) m.turns.set(turnId, status);
    }
    return status;
  }

  private journal(sql: string, params: unknown[]): void {
    const record: RecordBuilder | null = this.statements.recording;
    if (record === null) throw new Error("a deferred row change outside a store change");
    record.add(sql, params);
  }
}

const LAST_SEQ = ["last_seq"];
const LAST_SEQ_AT = [SESSION_PARAM.lastSeq];
const LEASE_COLUMNS = ["lease_runtime_id", "lease_epoch", "lease_expires_at"];
const LEASE_AT = [
  SESSION_PARAM.leaseRuntimeId,
  SESSION_PARAM.leaseEpoch,
  SESSION_PARAM.leaseExpiresAt,
];

interface PatchedColumns {
  columns: string[];
  /** Each column's index among the row's INSERT parameters. */
  positions: number[];
  set: unknown[];
}

/** `base` plus the column, INSERT position and value of each field whose bit is set in `mask`. */
function patched(
  fields: readonly (readonly [string, string, boolean])[],
  fieldParam: readonly number[],
  mask: number,
  values: unknown[],
  base: PatchedColumns,
): PatchedColumns {
  let v = 0;
  for (let i = 0; i < fields.length; i++) {
    if ((mask & (1 << i)) === 0) continue;
    base.columns.push(fields[i]![1]);
    base.positions.push(fieldParam[i]!);
    base.set.push(values[v++]);
  }
  return base;
}

/** The refusal SQLite would give for the same key (sqlite-errors.ts maps its own the same way). */
function duplicate(key: string, id: string): StoreError {
  return new StoreError("duplicate", `A unique key is already taken: ${key} ${id}.`);
}
