// The Store port on one SQLite file through better-sqlite3. Every call is synchronous under
// the hood, so concurrent callers in one process are serialised by the event loop; several
// processes on the same file are serialised by SQLite's write lock (WAL, BEGIN IMMEDIATE,
// busy_timeout).

import {
  type ApprovalRecord,
  type ApprovalStatus,
  type EventRecord,
  isoNow,
  type Lease,
  type MessageRecord,
  type NewEvent,
  type ResultFilter,
  type ResultRecord,
  type SessionFilter,
  type SessionRecord,
  type Store,
  type ToolCallRecord,
  type TurnRecord,
  type WriteBatch,
} from "@opencomputer/runtime";
import type Database from "better-sqlite3";
import { APPROVAL_COLUMNS, type ApprovalRow, approvalFromRow } from "./approval-rows.ts";
import { DeferredRowWriter } from "./deferred-rows.ts";
import { GroupCommit } from "./group-commit.ts";
import { Journal } from "./journal.ts";
import {
  expireLeasesOf,
  LIVE_LEASE_HOLDERS,
  RELEASE_LEASE,
  RENEW_LEASE,
  takeLease,
} from "./lease.ts";
import { PendingRows } from "./pending-rows.ts";
import type { RowWriter } from "./row-writer.ts";
import {
  EVENT_COLUMNS,
  type EventRow,
  eventFromRow,
  MESSAGE_COLUMNS,
  type MessageRow,
  messageFromRow,
  RESULT_COLUMNS,
  type ResultRow,
  resultFromRow,
  type SessionRow,
  sessionAsInserted,
  sessionFromRow,
  sessionParams,
  TOOL_CALL_COLUMNS,
  type ToolCallRow,
  TURN_COLUMNS,
  type TurnRow,
  toolCallFromRow,
  turnFromRow,
} from "./rows.ts";
import { sessionListQuery } from "./session-list.ts";
import { SqlRowWriter } from "./sql-rows.ts";
import { toStoreError } from "./sqlite-errors.ts";
import { StatementCache } from "./statements.ts";
import { openDatabase, type SqliteStoreOptions } from "./store-options.ts";
import { BatchWriter } from "./write-batch.ts";

export type { SqliteStoreOptions };

type Fn<A extends unknown[], R> = (...args: A) => R;

export class SqliteStore implements Store {
  /** The underlying connection, for diagnostics and tests. */
  readonly database: Database.Database;
  private readonly statements: StatementCache;
  private readonly writer: BatchWriter;
  private readonly rows: RowWriter;
  /** Set under group commit: the row writer that writes behind. */
  private readonly deferred: DeferredRowWriter | null;
  /** Set under group commit: rows written behind, which answer reads of sessions they hold. */
  private readonly pending: PendingRows | null;
  private readonly applyTx: Fn<[string, WriteBatch], EventRecord[]>;
  private readonly createTx: Fn<
    [SessionRecord, readonly NewEvent[]],
    { session: SessionRecord; created: boolean }
  >;
  private readonly acquireTx: Fn<[string, string, number, number], Lease | null>;
  private readonly leasedApplyTx: Fn<
    [string, string, number, WriteBatch],
    { lease: Lease; events: EventRecord[] } | null
  >;
  private readonly renewTx: Fn<[string, Lease, number], Lease | null>;
  private readonly releaseTx: Fn<[string, Lease], void>;
  private readonly expireTx: Fn<[string], string[]>;
  private readonly group: GroupCommit | null;
  private readonly changeTx: Fn<[(statements: StatementCache) => unknown], unknown>;

  constructor(options: SqliteStoreOptions) {
    const db = openDatabase(options);
    this.database = db;
    this.statements = new StatementCache(db);
    const groupCommitMs = options.groupCommitMs ?? 5;
    const onFile = options.path !== ":memory:" && options.path !== "";
    let journal: Journal | null = null;
    try {
      if (onFile && groupCommitMs > 0) {
        journal = new Journal(`${options.path}-oclog`, options.durability === "full");
        const pending = new PendingRows(db);
        this.pending = pending;
        const deferred = new DeferredRowWriter(db, this.statements, pending);
        this.deferred = deferred;
        this.rows = deferred;
        this.group = new GroupCommit(
          db,
          this.statements,
          journal,
          groupCommitMs,
          { pending, reset: () => deferred.reset() },
          options.groupClock,
        );
      } else {
        this.deferred = null;
        this.pending = null;
        this.rows = new SqlRowWriter(this.statements);
        this.group = null;
      }
    } catch (error) {
      journal?.close();
      db.close();
      throw error;
    }
    this.writer = new BatchWriter(this.statements, this.rows);
    const writer = this.writer;
    // Without group commit each change is its own BEGIN IMMEDIATE transaction.
    const tx = <A extends unknown[], R>(body: (...args: A) => R): Fn<A, R> =>
      this.group !== null ? this.group.wrap(body) : db.transaction(body).immediate;
    this.applyTx = tx((sessionId: string, batch: WriteBatch) => writer.write(sessionId, batch));
    this.createTx = tx((session: SessionRecord, events: readonly NewEvent[]) =>
      this.createInTx(session, events),
    );
    this.acquireTx = tx((sessionId: string, runtimeId: string, ttlMs: number, now: number) =>
      takeLease(this.rows, sessionId, runtimeId, ttlMs, now),
    );
    this.leasedApplyTx = tx(
      (sessionId: string, runtimeId: string, ttlMs: number, batch: WriteBatch) => {
        const lease = takeLease(this.rows, sessionId, runtimeId, ttlMs, Date.now());
        if (lease === null) return null;
        return { lease, events: writer.write(sessionId, { ...batch, fence: lease }) };
      },
    );
    this.renewTx = tx((sessionId: string, lease: Lease, expiresAt: number): Lease | null => {
      const { changes } = this.statements
        .get(RENEW_LEASE, sessionId)
        .run(expiresAt, sessionId, lease.runtimeId, lease.epoch);
      this.deferred?.forget(sessionId);
      return changes === 0 ? null : { runtimeId: lease.runtimeId, epoch: lease.epoch, expiresAt };
    });
    this.releaseTx = tx((sessionId: string, lease: Lease) => {
      this.statements
        .get(RELEASE_LEASE, sessionId)
        .run(sessionId, lease.runtimeId, lease.epoch, lease.expiresAt);
      this.deferred?.forget(sessionId);
    });
    this.changeTx = tx((body: (statements: StatementCache) => unknown) => body(this.statements));
    this.expireTx = tx((runtimeId: string) =>
      expireLeasesOf(this.statements, runtimeId, (id) => this.deferred?.forget(id)),
    );
  }

  async applyWithLease(
    sessionId: string,
    runtimeId: string,
    ttlMs: number,
    batch: WriteBatch,
  ): Promise<{ lease: Lease; events: EventRecord[] } | null> {
    try {
      return this.leasedApplyTx(sessionId, runtimeId, ttlMs, batch);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async createSession(
    session: SessionRecord,
    events: readonly NewEvent[],
  ): Promise<{ session: SessionRecord; created: boolean }> {
    try {
      return this.createTx(session, events);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async apply(sessionId: string, batch: WriteBatch): Promise<EventRecord[]> {
    try {
      return this.applyTx(sessionId, batch);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async acquireLease(
    sessionId: string,
    runtimeId: string,
    ttlMs: number,
    now: number = Date.now(),
  ): Promise<Lease | null> {
    return this.acquireTx(sessionId, runtimeId, ttlMs, now);
  }

  async renewLease(
    sessionId: string,
    lease: Lease,
    ttlMs: number,
    now: number = Date.now(),
  ): Promise<Lease | null> {
    return this.renewTx(sessionId, lease, now + ttlMs);
  }

  async releaseLease(sessionId: string, lease: Lease): Promise<void> {
    this.releaseTx(sessionId, lease);
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.readSession(sessionId);
  }

  async listSessions(filter: SessionFilter): Promise<SessionRecord[]> {
    const { sql, params } = sessionListQuery(filter);
    const rows = this.statements.get(sql).all(params) as SessionRow[];
    return rows.map(sessionFromRow);
  }

  async listTurns(sessionId: string): Promise<TurnRecord[]> {
    const rows = this.statements
      .get(`SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? ORDER BY rid`, sessionId)
      .all(sessionId) as TurnRow[];
    return rows.map(turnFromRow);
  }

  async getSessionWithActiveTurns(
    sessionId: string,
  ): Promise<{ session: SessionRecord; activeTurns: TurnRecord[] } | undefined> {
    // In-process reads: two are as cheap as one, and each sees the pending write-behind rows.
    const session = await this.getSession(sessionId);
    if (!session) return undefined;
    return { session, activeTurns: await this.listActiveTurns(sessionId) };
  }

  async listActiveTurns(sessionId: string): Promise<TurnRecord[]> {
    const pending = this.pending?.activeTurnRows(sessionId);
    if (pending !== undefined) return pending.map(turnFromRow);
    // The same condition as the partial index turns_active, so SQLite reads only that index.
    const rows = this.statements
      .get(
        `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? AND status IN ('queued', 'running') ORDER BY rid`,
        sessionId,
      )
      .all(sessionId) as TurnRow[];
    return rows.map(turnFromRow);
  }

  async lastSettledTurn(sessionId: string): Promise<TurnRecord | undefined> {
    // Scans the session's turns inside SQLite; only the one row is decoded.
    const row = this.statements
      .get(
        `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? AND settled_at IS NOT NULL
           AND outcome IS NOT 'steered' ORDER BY settled_at DESC, rid DESC LIMIT 1`,
        sessionId,
      )
      .get(sessionId) as TurnRow | undefined;
    return row && turnFromRow(row);
  }

  async firstTurn(sessionId: string): Promise<TurnRecord | undefined> {
    const row = this.statements
      .get(`SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? ORDER BY rid LIMIT 1`, sessionId)
      .get(sessionId) as TurnRow | undefined;
    return row && turnFromRow(row);
  }

  async getTurn(sessionId: string, turnId: string): Promise<TurnRecord | undefined> {
    const pending = this.pending?.turnRow(sessionId, turnId);
    if (pending !== undefined) return pending === null ? undefined : turnFromRow(pending);
    const row = this.statements
      .get(`SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? AND id = ?`, sessionId)
      .get(sessionId, turnId) as TurnRow | undefined;
    return row === undefined ? undefined : turnFromRow(row);
  }

  async findTurnByIdempotencyKey(sessionId: string, key: string): Promise<TurnRecord | undefined> {
    const row = this.statements
      .get(
        `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? AND idempotency_key = ?`,
        sessionId,
      )
      .get(sessionId, key) as TurnRow | undefined;
    return row === undefined ? undefined : turnFromRow(row);
  }

  async listMessages(sessionId: string): Promise<MessageRecord[]> {
    const rows = this.statements
      .get(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY rid`, sessionId)
      .all(sessionId) as MessageRow[];
    return rows.map(messageFromRow);
  }

  async listToolCalls(sessionId: string, turnId?: string): Promise<ToolCallRecord[]> {
    const rows = (
      turnId === undefined
        ? this.statements
            .get(
              `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE session_id = ? ORDER BY rid`,
              sessionId,
            )
            .all(sessionId)
        : this.statements
            .get(
              `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE session_id = ? AND turn_id = ?
               ORDER BY rid`,
              sessionId,
            )
            .all(sessionId, turnId)
    ) as ToolCallRow[];
    return rows.map(toolCallFromRow);
  }

  async getToolCall(sessionId: string, callId: string): Promise<ToolCallRecord | undefined> {
    const row = this.statements
      .get(
        `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE session_id = ? AND call_id = ?`,
        sessionId,
      )
      .get(sessionId, callId) as ToolCallRow | undefined;
    return row === undefined ? undefined : toolCallFromRow(row);
  }

  async listResults(sessionId: string, filter: ResultFilter): Promise<ResultRecord[]> {
    let sql = `SELECT ${RESULT_COLUMNS} FROM results WHERE session_id = ?`;
    const params: unknown[] = [sessionId];
    if (filter.turnId !== undefined) {
      sql += " AND turn_id = ?";
      params.push(filter.turnId);
    }
    if (filter.after !== undefined) {
      // An unknown cursor matches nothing (rid > NULL), rather than restarting from the top.
      sql += " AND rid > (SELECT rid FROM results WHERE session_id = ? AND result_id = ?)";
      params.push(sessionId, filter.after);
    }
    sql += " ORDER BY rid LIMIT ?";
    params.push(Math.max(0, filter.limit));
    const rows = this.statements.get(sql, sessionId).all(params) as ResultRow[];
    return rows.map(resultFromRow);
  }

  async getResult(sessionId: string, resultId: string): Promise<ResultRecord | undefined> {
    const row = this.statements
      .get(
        `SELECT ${RESULT_COLUMNS} FROM results WHERE session_id = ? AND result_id = ?`,
        sessionId,
      )
      .get(sessionId, resultId) as ResultRow | undefined;
    return row === undefined ? undefined : resultFromRow(row);
  }

  async getResultByCall(sessionId: string, toolCallId: string): Promise<ResultRecord | undefined> {
    const row = this.statements
      .get(
        `SELECT ${RESULT_COLUMNS} FROM results WHERE session_id = ? AND tool_call_id = ?`,
        sessionId,
      )
      .get(sessionId, toolCallId) as ResultRow | undefined;
    return row === undefined ? undefined : resultFromRow(row);
  }

  async getApproval(approvalId: string): Promise<ApprovalRecord | undefined> {
    const row = this.statements
      .get(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = ?`)
      .get(approvalId) as ApprovalRow | undefined;
    return row === undefined ? undefined : approvalFromRow(row);
  }

  async listApprovals(sessionId: string): Promise<ApprovalRecord[]> {
    const rows = this.statements
      .get(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE session_id = ? ORDER BY rid`, sessionId)
      .all(sessionId) as ApprovalRow[];
    return rows.map(approvalFromRow);
  }

  async listApprovalsByStatus(
    statuses: readonly ApprovalStatus[],
    limit: number,
  ): Promise<ApprovalRecord[]> {
    if (statuses.length === 0) return [];
    const marks = statuses.map(() => "?").join(", ");
    const rows = this.statements
      .get(
        `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE status IN (${marks}) ORDER BY rid LIMIT ?`,
      )
      .all(...statuses, Math.max(0, limit)) as ApprovalRow[];
    return rows.map(approvalFromRow);
  }

  async readEvents(sessionId: string, after: number, limit: number): Promise<EventRecord[]> {
    const rows = this.statements
      .get(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq > ?
         ORDER BY seq LIMIT ?`,
        sessionId,
      )
      .all(sessionId, after, Math.max(0, limit)) as EventRow[];
    return rows.map(eventFromRow);
  }

  async listRecoverableSessions(now: number = Date.now()): Promise<string[]> {
    return this.statements
      .get(
        `SELECT s.id FROM sessions s
         WHERE s.status <> 'ended'
           AND (s.lease_runtime_id IS NULL OR s.lease_expires_at <= ?)
           AND EXISTS (SELECT 1 FROM turns t
                       WHERE t.session_id = s.id AND t.status IN ('queued', 'running'))
         ORDER BY s.created_at, s.id`,
      )
      .pluck()
      .all(now) as string[];
  }

  async listLeaseHolders(now: number = Date.now()): Promise<string[]> {
    return this.statements.get(LIVE_LEASE_HOLDERS).pluck().all(now) as string[];
  }

  async expireLeasesOf(runtimeId: string): Promise<string[]> {
    return this.expireTx(runtimeId);
  }

  /** One change (transaction, journal) for tables beside the store's (memory-store.ts); check before writing. */
  change<R>(body: (statements: StatementCache) => R): R {
    return this.changeTx(body) as R;
  }

  read<R>(body: (statements: StatementCache) => R): R {
    return body(this.statements);
  }

  /**
   * Runs `fn` on this connection outside any group: the open groups on this file (this store's
   * and its peers' in this process) are committed first, so a statement of another table set
   * (the trigger store) commits on its own and is never undone with a group.
   */
  outsideGroup<R>(fn: (db: Database.Database) => R): R {
    this.group?.beforeRead();
    this.group?.commit();
    return fn(this.database);
  }

  /** Commits the open group (if any), then closes the connection. */
  async close(): Promise<void> {
    if (!this.database.open) return;
    try {
      this.group?.close();
    } finally {
      this.database.close();
    }
  }

  private readSession(sessionId: string): SessionRecord | undefined {
    const pending = this.pending?.sessionRow(sessionId);
    if (pending !== undefined) return sessionFromRow(pending);
    const row = this.statements
      .get("SELECT * FROM sessions WHERE id = ?", sessionId)
      .get(sessionId) as SessionRow | undefined;
    return row === undefined ? undefined : sessionFromRow(row);
  }

  private createInTx(
    session: SessionRecord,
    events: readonly NewEvent[],
  ): { session: SessionRecord; created: boolean } {
    if (session.idempotencyKey !== null) {
      const row = this.statements
        .get("SELECT * FROM sessions WHERE project_id = ? AND idempotency_key = ?")
        .get(session.projectId, session.idempotencyKey) as SessionRow | undefined;
      if (row !== undefined) return { session: sessionFromRow(row), created: false };
    }
    const params = sessionParams(session, events.length);
    // Read back before the row writer keeps the array (a later write may patch it in place).
    const inserted = sessionAsInserted(session, params);
    this.rows.insertSession(params);
    this.writer.appendEvents(session.id, 0, isoNow(), events);
    return { session: inserted, created: true };
  }
}

export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}
