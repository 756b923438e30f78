// The Store port on PostgreSQL through a node-postgres Pool. Every write is one statement, so one
// round trip and its own transaction: a batch is one call of oc_write (write-function.ts), or
// shares a call of oc_write_many with the other sessions' writes of its tick (write-many.ts).
// Either locks the session row first: that serialises the writers of one session across
// connections and processes, while different sessions proceed in parallel. Reads are single
// statements on the pipeline (pipeline.ts) or any pooled connection. create-store.ts connects.

import type {
  ApprovalRecord,
  ApprovalStatus,
  EventRecord,
  Lease,
  MessageRecord,
  NewEvent,
  ResultFilter,
  ResultRecord,
  SessionFilter,
  SessionRecord,
  Store,
  ToolCallRecord,
  TurnRecord,
  WriteBatch,
} from "@opencomputer/runtime";
import type pg from "pg";
import { SESSION_WITH_ACTIVE_TURNS } from "./active-turns.ts";
import { APPROVAL_COLUMNS, type ApprovalRow, approvalFromRow } from "./approvals.ts";
import { createSessionStatement } from "./create-session.ts";
import {
  EXPIRE_LEASES_OF,
  LIST_RECOVERABLE,
  LIVE_LEASE_HOLDERS,
  RELEASE_LEASES,
  RENEW_LEASE,
} from "./lease.ts";
import { LeaseReleases } from "./lease-release.ts";
import { RELEASE_LEASES_AND_NOTIFY } from "./notify.ts";
import { toStoreError } from "./pg-errors.ts";
import type { PipelinedConnections } from "./pipeline.ts";
import type { PipelineSize } from "./pipeline-size.ts";
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
  SESSION_COLUMNS,
  type SessionRow,
  sessionFromRow,
  TOOL_CALL_COLUMNS,
  type ToolCallRow,
  TURN_COLUMNS,
  type TurnRow,
  toolCallFromRow,
  turnFromRow,
} from "./rows.ts";
import { sessionListQuery } from "./session-list.ts";
import { type BatchEnd, type WriteRow, writeCall } from "./write-batch.ts";
import { WriteCombiner } from "./write-many.ts";

export class PostgresStore implements Store {
  private closed = false;
  /** Names of the prepared statements, by text (see `query`). */
  private readonly statementNames = new Map<string, string>();
  private readonly releases = new LeaseReleases((...arrays) =>
    this.channel === null
      ? this.query(RELEASE_LEASES, arrays)
      : this.query(RELEASE_LEASES_AND_NOTIFY, [...arrays, this.channel]),
  );

  /** Writes of one tick, as one call where they can be (write-many.ts). */
  private readonly writes: WriteCombiner;

  /** Use `createPostgresStore`, which also migrates the schema. */
  constructor(
    readonly pool: pg.Pool,
    /** The NOTIFY channel (notify.ts), or null to send none. */
    readonly channel: string | null = null,
    /** Where the store's own single statements go; the pool when null. */
    private readonly pipeline: PipelinedConnections | null = null,
    /**
     * The pipeline's shape and the commit flush it was chosen by (ms; null when both fields
     * were given, so nothing was timed); null without a pipeline. For logs and tests.
     */
    readonly pipelineShape: (PipelineSize & { flushMs: number | null }) | null = null,
    /** Whether concurrent sessions' writes share a call (PostgresStoreOptions#combineWrites). */
    combineWrites = true,
  ) {
    this.writes = new WriteCombiner(
      (text, values, locks) => this.query(text, values, locks),
      combineWrites,
    );
  }

  async createSession(
    session: SessionRecord,
    events: readonly NewEvent[],
  ): Promise<{ session: SessionRecord; created: boolean }> {
    // One statement, so its own transaction: no BEGIN and COMMIT round trips.
    try {
      const { sql, params } = createSessionStatement(session, events);
      // A creator with the same key waits for this one to commit: one lock order for both.
      const key = session.idempotencyKey;
      const locks = key == null ? undefined : `key ${session.projectId} ${key}`;
      const inserted = await this.query<SessionRow>(sql, params, locks);
      if (inserted.rows[0] === undefined) {
        // The key is taken. ON CONFLICT waited for a concurrent creator to commit, so this
        // new statement sees its row (READ COMMITTED: a fresh snapshot per statement).
        const { rows } = await this.query<SessionRow>(
          `SELECT ${SESSION_COLUMNS} FROM sessions WHERE project_id = $1 AND idempotency_key = $2`,
          [session.projectId, session.idempotencyKey],
        );
        return { session: sessionFromRow(rows[0]!), created: false };
      }
      return { session: sessionFromRow(inserted.rows[0]), created: true };
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async apply(sessionId: string, batch: WriteBatch): Promise<EventRecord[]> {
    const { events } = await this.write(sessionId, batch, { channel: this.channel });
    return events;
  }

  async acquireLease(
    sessionId: string,
    runtimeId: string,
    ttlMs: number,
    now: number = Date.now(),
  ): Promise<Lease | null> {
    const claim = { runtimeId, expiresAt: now + ttlMs, now };
    const { lease } = await this.write(
      sessionId,
      { ops: [], events: [] },
      { channel: null, claim },
    );
    return lease;
  }

  async applyWithLease(
    sessionId: string,
    runtimeId: string,
    ttlMs: number,
    batch: WriteBatch,
  ): Promise<{ lease: Lease; events: EventRecord[] } | null> {
    const now = Date.now();
    const claim = { runtimeId, expiresAt: now + ttlMs, now };
    // The claim replaces any fence: the batch is written under the lease it takes.
    const { fence: _, ...unfenced } = batch;
    const written = await this.write(sessionId, unfenced, { channel: this.channel, claim });
    return written.lease === null ? null : { lease: written.lease, events: written.events };
  }

  /**
   * One call of oc_write (write-function.ts): one round trip, one transaction. `lease` is the
   * claim's outcome (null when refused, with nothing written), or null without a claim.
   */
  private async write(
    sessionId: string,
    batch: WriteBatch,
    end: BatchEnd,
  ): Promise<{ events: EventRecord[]; lease: Lease | null }> {
    const call = writeCall(sessionId, batch, end);
    let row: WriteRow;
    try {
      row = await this.writes.write(call.parts);
    } catch (error) {
      throw toStoreError(error);
    }
    if (!row.claimed) return { events: [], lease: null };
    const lease =
      end.claim === undefined
        ? null
        : {
            runtimeId: end.claim.runtimeId,
            epoch: Number(row.lease_epoch),
            expiresAt: end.claim.expiresAt,
          };
    return { events: call.events(Number(row.base_seq)), lease };
  }

  async renewLease(
    sessionId: string,
    lease: Lease,
    ttlMs: number,
    now: number = Date.now(),
  ): Promise<Lease | null> {
    const expiresAt = now + ttlMs;
    const { rowCount } = await this.query(
      RENEW_LEASE,
      [sessionId, lease.runtimeId, lease.epoch, expiresAt],
      sessionId,
    );
    return rowCount === 0 ? null : { runtimeId: lease.runtimeId, epoch: lease.epoch, expiresAt };
  }

  /** Released with the others asked for in the same tick, in one statement (lease-release.ts). */
  releaseLease(sessionId: string, lease: Lease): Promise<void> {
    return this.releases.release(sessionId, lease);
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.readSession("id", sessionId);
  }

  async listSessions(filter: SessionFilter): Promise<SessionRecord[]> {
    const { sql, params } = sessionListQuery(filter);
    const { rows } = await this.pool.query<SessionRow>(sql, params);
    return rows.map(sessionFromRow);
  }

  async listTurns(sessionId: string): Promise<TurnRecord[]> {
    const { rows } = await this.query<TurnRow>(
      `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = $1 ORDER BY rid`,
      [sessionId],
    );
    return rows.map(turnFromRow);
  }

  async getSessionWithActiveTurns(
    sessionId: string,
  ): Promise<{ session: SessionRecord; activeTurns: TurnRecord[] } | undefined> {
    const { rows } = await this.query<SessionRow & { active: TurnRow[] }>(
      SESSION_WITH_ACTIVE_TURNS,
      [sessionId],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { session: sessionFromRow(row), activeTurns: row.active.map(turnFromRow) };
  }

  async listActiveTurns(sessionId: string): Promise<TurnRecord[]> {
    // The same condition as the partial index turns_active.
    const { rows } = await this.query<TurnRow>(
      `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = $1 AND status IN ('queued', 'running') ORDER BY rid`,
      [sessionId],
    );
    return rows.map(turnFromRow);
  }

  async lastSettledTurn(sessionId: string): Promise<TurnRecord | undefined> {
    const { rows } = await this.query<TurnRow>(
      `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = $1 AND settled_at IS NOT NULL
         AND outcome IS DISTINCT FROM 'steered' ORDER BY settled_at DESC, rid DESC LIMIT 1`,
      [sessionId],
    );
    const row = rows[0];
    return row && turnFromRow(row);
  }

  async firstTurn(sessionId: string): Promise<TurnRecord | undefined> {
    return this.one<TurnRow, TurnRecord>(
      `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = $1 ORDER BY rid LIMIT 1`,
      [sessionId],
      turnFromRow,
    );
  }

  async getTurn(sessionId: string, turnId: string): Promise<TurnRecord | undefined> {
    return this.one<TurnRow, TurnRecord>(
      `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = $1 AND id = $2`,
      [sessionId, turnId],
      turnFromRow,
    );
  }

  async findTurnByIdempotencyKey(sessionId: string, key: string): Promise<TurnRecord | undefined> {
    return this.one<TurnRow, TurnRecord>(
      `SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = $1 AND idempotency_key = $2`,
      [sessionId, key],
      turnFromRow,
    );
  }

  async listMessages(sessionId: string): Promise<MessageRecord[]> {
    const { rows } = await this.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ORDER BY rid`,
      [sessionId],
    );
    return rows.map(messageFromRow);
  }

  async listToolCalls(sessionId: string, turnId?: string): Promise<ToolCallRecord[]> {
    const { rows } = await this.query<ToolCallRow>(
      `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls
       WHERE session_id = $1 AND ($2::text IS NULL OR turn_id = $2) ORDER BY rid`,
      [sessionId, turnId ?? null],
    );
    return rows.map(toolCallFromRow);
  }

  async getToolCall(sessionId: string, callId: string): Promise<ToolCallRecord | undefined> {
    return this.one<ToolCallRow, ToolCallRecord>(
      `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE session_id = $1 AND call_id = $2`,
      [sessionId, callId],
      toolCallFromRow,
    );
  }

  async listResults(sessionId: string, filter: ResultFilter): Promise<ResultRecord[]> {
    // An unknown `after` matches nothing (rid > NULL), rather than restarting from the top.
    const { rows } = await this.query<ResultRow>(
      `SELECT ${RESULT_COLUMNS} FROM results
       WHERE session_id = $1
         AND ($2::text IS NULL OR turn_id = $2)
         AND ($3::text IS NULL
              OR rid > (SELECT rid FROM results WHERE session_id = $1 AND result_id = $3))
       ORDER BY rid LIMIT $4`,
      [sessionId, filter.turnId ?? null, filter.after ?? null, Math.max(0, filter.limit)],
    );
    return rows.map(resultFromRow);
  }

  async getResult(sessionId: string, resultId: string): Promise<ResultRecord | undefined> {
    return this.one<ResultRow, ResultRecord>(
      `SELECT ${RESULT_COLUMNS} FROM results WHERE session_id = $1 AND result_id = $2`,
      [sessionId, resultId],
      resultFromRow,
    );
  }

  async getResultByCall(sessionId: string, toolCallId: string): Promise<ResultRecord | undefined> {
    return this.one<ResultRow, ResultRecord>(
      `SELECT ${RESULT_COLUMNS} FROM results WHERE session_id = $1 AND tool_call_id = $2`,
      [sessionId, toolCallId],
      resultFromRow,
    );
  }

  async getApproval(approvalId: string): Promise<ApprovalRecord | undefined> {
    return this.one<ApprovalRow, ApprovalRecord>(
      `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`,
      [approvalId],
      approvalFromRow,
    );
  }

  async listApprovals(sessionId: string): Promise<ApprovalRecord[]> {
    const { rows } = await this.query<ApprovalRow>(
      `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE session_id = $1 ORDER BY rid`,
      [sessionId],
    );
    return rows.map(approvalFromRow);
  }

  async listApprovalsByStatus(
    statuses: readonly ApprovalStatus[],
    limit: number,
  ): Promise<ApprovalRecord[]> {
    const { rows } = await this.query<ApprovalRow>(
      `SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE status = ANY($1::text[]) ORDER BY rid LIMIT $2`,
      [[...statuses], Math.max(0, limit)],
    );
    return rows.map(approvalFromRow);
  }

  async readEvents(sessionId: string, after: number, limit: number): Promise<EventRecord[]> {
    const { rows } = await this.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE session_id = $1 AND seq > $2
       ORDER BY seq LIMIT $3`,
      [sessionId, after, Math.max(0, limit)],
    );
    return rows.map(eventFromRow);
  }

  async listRecoverableSessions(now: number = Date.now()): Promise<string[]> {
    const { rows } = await this.query<{ id: string }>(LIST_RECOVERABLE, [now]);
    return rows.map((r) => r.id);
  }

  async listLeaseHolders(now: number = Date.now()): Promise<string[]> {
    const { rows } = await this.query<{ holder: string }>(LIVE_LEASE_HOLDERS, [now]);
    return rows.map((r) => r.holder);
  }

  async expireLeasesOf(runtimeId: string): Promise<string[]> {
    const { rows } = await this.query<{ id: string }>(EXPIRE_LEASES_OF, [runtimeId]);
    return rows.map((r) => r.id);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.releases.flush();
    await this.pipeline?.end();
    await this.pool.end();
  }

  /**
   * A statement whose text never varies, prepared once per connection (a named statement):
   * PostgreSQL parses and plans it once, not on every call. `locks`: what it locks (a session's
   * row by its id, or an idempotency key), the order in which statements sharing a commit take
   * their locks (see SyncGroup).
   */
  private query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: unknown[],
    locks?: string,
  ): Promise<pg.QueryResult<R>> {
    let name = this.statementNames.get(text);
    if (name === undefined) {
      name = `oc_${this.statementNames.size}`;
      this.statementNames.set(text, name);
    }
    if (this.pipeline !== null) return this.pipeline.query<R>({ name, text, values }, locks);
    return this.pool.query<R>({ name, text, values });
  }

  private async readSession(column: "id", value: string): Promise<SessionRecord | undefined> {
    const { rows } = await this.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${column} = $1`,
      [value],
    );
    return rows[0] === undefined ? undefined : sessionFromRow(rows[0]);
  }

  private async one<R extends pg.QueryResultRow, T>(
    sql: string,
    params: unknown[],
    map: (row: R) => T,
  ): Promise<T | undefined> {
    const { rows } = await this.query<R>(sql, params);
    return rows[0] === undefined ? undefined : map(rows[0]);
  }
}
