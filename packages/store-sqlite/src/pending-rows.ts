// The rows a group's writes changed and SQLite has not been told yet (write-behind, see
// deferred-rows.ts), kept per session and merged per row: a session or turn inserted and then
// updated in the same group is one INSERT with its final values, several updates of one row are
// one UPDATE, a tool call's upserts are its last, and messages and events go in multi-row
// INSERTs. Running them gives the same rows as running the journaled statements one by one:
// each session's inserts keep their order (rowids are the insertion order, and every read orders
// rows of one session), updates set each column to its last value and add up the revision bumps.
//
// A statement about one session only needs that session's rows run first (`flush(sessionId)`);
// one that reads across sessions runs them all (`flush()`).

import type Database from "better-sqlite3";
import {
  EVENT_CHUNK,
  EVENT_PARAMS,
  INSERT_TURN,
  insertEventsSql,
  insertMessagesSql,
  MESSAGE_PARAMS,
  rowOf,
  SESSION_INSERT_COLUMNS,
  SESSION_PARAM,
  TURN_INSERT_COLUMNS,
  TURN_PARAM,
  UPSERT_TOOL_CALL,
} from "./row-writer.ts";
import { INSERT_SESSION, type SessionRow, type TurnRow } from "./rows.ts";

interface RowUpdate {
  /** Column → last value set. */
  set: Map<string, unknown>;
  /** Revision increments (sessions only). */
  bumps: number;
}

/** One session's pending rows. */
class SessionRows {
  constructor(readonly id: string) {}
  /** INSERT_SESSION's parameters when the session was inserted in this group. */
  insert: unknown[] | null = null;
  update: RowUpdate | null = null;
  readonly turnInserts = new Map<string, unknown[]>();
  readonly turnUpdates = new Map<string, RowUpdate>();
  /** MESSAGE_PARAMS per row, flat. */
  messages: unknown[] = [];
  /** Call id → the last upsert's parameters, in first-upsert order. */
  readonly calls = new Map<string, unknown[]>();
  /** EVENT_PARAMS per row, flat. */
  events: unknown[] = [];
}

export class PendingRows {
  private sessions = new Map<string, SessionRows>();
  private readonly prepared = new Map<string, Database.Statement>();
  /** How many row changes wait to be run (0: nothing to do). */
  size = 0;

  constructor(private readonly db: Database.Database) {}

  insertSession(params: unknown[]): void {
    this.of(params[SESSION_PARAM.id] as string).insert = params;
  }

  /** Sets columns of a session; `positions` are their indexes among INSERT_SESSION's params. */
  updateSession(
    sessionId: string,
    columns: readonly string[],
    positions: readonly number[],
    values: unknown[],
    bump: boolean,
  ): void {
    const rows = this.of(sessionId);
    if (rows.insert !== null) {
      for (let i = 0; i < values.length; i++) rows.insert[positions[i]!] = values[i];
      if (bump) (rows.insert[SESSION_PARAM.revision] as number)++;
      return;
    }
    rows.update ??= { set: new Map(), bumps: 0 };
    for (let i = 0; i < values.length; i++) rows.update.set.set(columns[i]!, values[i]);
    if (bump) rows.update.bumps++;
  }

  insertTurn(params: unknown[]): void {
    this.of(params[TURN_PARAM.sessionId] as string).turnInserts.set(
      params[TURN_PARAM.id] as string,
      params,
    );
  }

  updateTurn(
    sessionId: string,
    turnId: string,
    columns: readonly string[],
    positions: readonly number[],
    values: unknown[],
  ): void {
    const rows = this.of(sessionId);
    const inserted = rows.turnInserts.get(turnId);
    if (inserted !== undefined) {
      for (let i = 0; i < values.length; i++) inserted[positions[i]!] = values[i];
      return;
    }
    let update = rows.turnUpdates.get(turnId);
    if (update === undefined) {
      update = { set: new Map(), bumps: 0 };
      rows.turnUpdates.set(turnId, update);
    }
    for (let i = 0; i < values.length; i++) update.set.set(columns[i]!, values[i]);
  }

  insertMessage(params: unknown[]): void {
    const messages = this.of(params[0] as string).messages;
    for (let i = 0; i < params.length; i++) messages.push(params[i]);
  }

  upsertToolCall(params: unknown[]): void {
    this.of(params[0] as string).calls.set(params[1] as string, params);
  }

  insertEvents(params: unknown[]): void {
    const events = this.of(params[0] as string).events;
    for (let i = 0; i < params.length; i++) events.push(params[i]);
  }

  // Reads answered here, without running anything: a session inserted in this group has every
  // row here until they run, so for it these are complete. Undefined for any other session.

  sessionRow(sessionId: string): SessionRow | undefined {
    const params = this.sessions.get(sessionId)?.insert;
    return params == null ? undefined : rowOf<SessionRow>(SESSION_INSERT_COLUMNS, params);
  }

  /** The turn (null: the session has no such turn), or undefined: read SQLite. */
  turnRow(sessionId: string, turnId: string): TurnRow | null | undefined {
    const rows = this.inserted(sessionId);
    if (rows === undefined) return undefined;
    const params = rows.turnInserts.get(turnId);
    return params === undefined ? null : rowOf<TurnRow>(TURN_INSERT_COLUMNS, params);
  }

  activeTurnRows(sessionId: string): TurnRow[] | undefined {
    const rows = this.inserted(sessionId);
    if (rows === undefined) return undefined;
    const out: TurnRow[] = [];
    for (const params of rows.turnInserts.values()) {
      const status = params[TURN_PARAM.status];
      if (status === "queued" || status === "running") {
        out.push(rowOf<TurnRow>(TURN_INSERT_COLUMNS, params));
      }
    }
    return out;
  }

  /** The ids of a turn's calls still `started`. */
  openCallIds(sessionId: string, turnId: string): string[] | undefined {
    const rows = this.inserted(sessionId);
    if (rows === undefined) return undefined;
    const out: string[] = [];
    for (const [callId, params] of rows.calls) {
      if (params[2] === turnId && params[6] === "started") out.push(callId);
    }
    return out;
  }

  /**
   * Runs the pending rows of one session, or of all (without `sessionId`), and forgets them.
   * All sessions' rows go table by table, so their messages and events share INSERTs.
   */
  flush(sessionId?: string): void {
    if (this.size === 0) return;
    let batch: SessionRows[];
    if (sessionId === undefined) {
      batch = [...this.sessions.values()];
      this.discard();
    } else {
      const rows = this.sessions.get(sessionId);
      if (rows === undefined) return;
      this.sessions.delete(sessionId);
      this.size--;
      batch = [rows];
    }
    for (const rows of batch) if (rows.insert !== null) this.run(INSERT_SESSION, rows.insert);
    for (const rows of batch) {
      if (rows.update !== null) this.runUpdate("sessions", "id", rows.update, [rows.id]);
    }
    for (const rows of batch)
      for (const params of rows.turnInserts.values()) this.run(INSERT_TURN, params);
    for (const rows of batch) {
      for (const [turnId, update] of rows.turnUpdates) {
        this.runUpdate("turns", "session_id = ? AND id", update, [rows.id, turnId]);
      }
    }
    this.runRows(batch, (rows) => rows.messages, MESSAGE_PARAMS, insertMessagesSql);
    for (const rows of batch)
      for (const params of rows.calls.values()) this.run(UPSERT_TOOL_CALL, params);
    this.runRows(batch, (rows) => rows.events, EVENT_PARAMS, insertEventsSql);
  }

  /** Forgets every pending change (the group is rolled back and the journal replayed). */
  discard(): void {
    this.sessions = new Map();
    this.size = 0;
  }

  private of(sessionId: string): SessionRows {
    let rows = this.sessions.get(sessionId);
    if (rows === undefined) {
      rows = new SessionRows(sessionId);
      this.sessions.set(sessionId, rows);
      this.size++;
    }
    return rows;
  }

  private inserted(sessionId: string): SessionRows | undefined {
    const rows = this.sessions.get(sessionId);
    return rows?.insert == null ? undefined : rows;
  }

  private runUpdate(table: string, key: string, update: RowUpdate, where: unknown[]): void {
    let sql = `UPDATE ${table} SET `;
    const params: unknown[] = [];
    let first = true;
    if (update.bumps > 0) {
      sql += "revision = revision + ?";
      params.push(update.bumps);
      first = false;
    }
    for (const [column, value] of update.set) {
      sql += first ? `${column} = ?` : `, ${column} = ?`;
      params.push(value);
      first = false;
    }
    if (first) return;
    sql += ` WHERE ${key} = ?`;
    for (const value of where) params.push(value);
    this.run(sql, params);
  }

  /** The rows of every session in `batch`, in order, EVENT_CHUNK per INSERT. */
  private runRows(
    batch: SessionRows[],
    flat: (rows: SessionRows) => unknown[],
    width: number,
    sqlFor: (rows: number) => string,
  ): void {
    let params: unknown[] = [];
    for (const rows of batch) {
      const values = flat(rows);
      for (let i = 0; i < values.length; i++) {
        params.push(values[i]);
        if (params.length === EVENT_CHUNK * width) {
          this.run(sqlFor(EVENT_CHUNK), params);
          params = [];
        }
      }
    }
    if (params.length > 0) this.run(sqlFor(params.length / width), params);
  }

  /** Prepared on this connection directly: these runs are already in the journal. */
  private run(sql: string, params: unknown[]): void {
    let stmt = this.prepared.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.prepared.set(sql, stmt);
    }
    stmt.run(params);
  }
}
