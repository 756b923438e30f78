// One WriteBatch, run inside a transaction the caller opened (BEGIN IMMEDIATE): guards first,
// then the ops in order, then the events with the next seqs (invariant 1). Any throw rolls the
// whole batch back. Hot path: statements are prepared once and patch-shaped UPDATEs are cached
// by a bitmask of the patched fields.

import {
  type ApprovalPatch,
  type ApprovalStatus,
  type EventRecord,
  mergePatch,
  type NewEvent,
  ownedBy,
  type SessionPatch,
  StoreError,
  type TurnPatch,
  type TurnStatus,
  turnUpdateRun,
  type WriteBatch,
} from "@opencomputer/runtime";
import type Database from "better-sqlite3";
import { approvalParams, approvalUpdate, INSERT_APPROVAL } from "./approval-rows.ts";
import { newEventId } from "./event-id.ts";
import { toJson } from "./rows.ts";
import type { StatementCache } from "./statements.ts";

type Statement = Database.Statement;

/** Events per INSERT statement (7 parameters each). */
const EVENT_CHUNK = 32;

// Read as a raw array: [status, last_seq, lease_runtime_id, lease_epoch, status of the expected
// turn (null when missing; absent without expectTurn)].
type GuardRow = [string, number, string | null, number | null, TurnStatus | null | undefined];

// Patchable fields: [key in the patch, column, stored as JSON].
const SESSION_FIELDS = [
  ["status", "status", false],
  ["result", "result", true],
  ["question", "question", true],
  ["runtime", "runtime", true],
  ["labels", "labels", true],
] as const;

const TURN_FIELDS = [
  ["status", "status", false],
  ["outcome", "outcome", false],
  ["error", "error", true],
  ["steps", "steps", false],
  ["startedAt", "started_at", false],
  ["settledAt", "settled_at", false],
  ["input", "input", true],
  ["mode", "mode", false],
] as const;

export class BatchWriter {
  private readonly guard: Statement;
  private readonly guardWithTurn: Statement;
  private readonly insertTurn: Statement;
  private readonly insertMessage: Statement;
  private readonly upsertToolCall: Statement;
  private readonly insertResult: Statement;
  private readonly eventInserts: Statement[] = [];
  private readonly setLastSeq: Statement;
  private readonly openCalls: Statement;
  private readonly turnUpdates: Statement[] = [];
  private readonly sessionUpdates: Statement[] = [];

  constructor(private readonly statements: StatementCache) {
    const s = statements;
    // One statement reads everything the guards need.
    this.guard = s
      .get("SELECT status, last_seq, lease_runtime_id, lease_epoch FROM sessions WHERE id = ?")
      .raw();
    this.guardWithTurn = s
      .get(
        `SELECT status, last_seq, lease_runtime_id, lease_epoch,
           (SELECT status FROM turns WHERE session_id = ? AND id = ?)
         FROM sessions WHERE id = ?`,
      )
      .raw();
    this.insertTurn = s.get(`INSERT INTO turns (session_id, id, input, mode, status, outcome, error,
      idempotency_key, steps, created_at, updated_at, started_at, settled_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertMessage = s.get(`INSERT INTO messages (session_id, id, turn_id, role, content,
      created_at) VALUES (?, ?, ?, ?, ?, ?)`);
    // ON CONFLICT DO UPDATE keeps the row (and its rowid, the insertion order) in place.
    this.upsertToolCall = s.get(`INSERT INTO tool_calls (session_id, call_id, turn_id, message_id,
      tool, input, status, output, error, attempts, started_at, settled_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (session_id, call_id) DO UPDATE SET turn_id = excluded.turn_id,
        message_id = excluded.message_id, tool = excluded.tool, input = excluded.input,
        status = excluded.status, output = excluded.output, error = excluded.error,
        attempts = excluded.attempts, started_at = excluded.started_at,
        settled_at = excluded.settled_at`);
    this.insertResult = s.get(`INSERT INTO results (session_id, result_id, agent_id,
      deployment_id, turn_id, message_id, tool_call_id, result_tool, schema_digest, data_digest,
      data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.setLastSeq = s.get("UPDATE sessions SET last_seq = ? WHERE id = ?");
    this.openCalls = s
      .get(
        "SELECT call_id FROM tool_calls WHERE session_id = ? AND turn_id = ? AND status = 'started'",
      )
      .pluck();
  }

  write(sessionId: string, batch: WriteBatch): EventRecord[] {
    const expectTurn = batch.expectTurn;
    const row = (
      expectTurn === undefined
        ? this.guard.get(sessionId)
        : this.guardWithTurn.get(sessionId, expectTurn.id, sessionId)
    ) as GuardRow | undefined;
    if (row === undefined) {
      throw new StoreError("session_not_found", `No session ${sessionId}.`);
    }
    const [status, lastSeq, holder, epoch, turnStatus] = row;
    const fence = batch.fence;
    if (fence !== undefined && (holder !== fence.runtimeId || epoch !== fence.epoch)) {
      throw new StoreError(
        "stale_epoch",
        `Session ${sessionId} is leased to ${holder ?? "nobody"} at epoch ${epoch ?? 0}; the ` +
          `write was fenced with ${fence.runtimeId} at epoch ${fence.epoch}.`,
      );
    }
    if (
      expectTurn !== undefined &&
      (turnStatus == null || !expectTurn.status.includes(turnStatus))
    ) {
      throw new StoreError(
        "turn_not_active",
        turnStatus == null
          ? `Session ${sessionId} has no turn ${expectTurn.id}.`
          : `Turn ${expectTurn.id} is ${turnStatus}, expected ${expectTurn.status.join(" or ")}.`,
      );
    }
    const expectSession = batch.expectSession;
    if (
      expectSession !== undefined &&
      !expectSession.status.includes(status as (typeof expectSession.status)[number])
    ) {
      throw new StoreError(
        "session_state",
        `Session ${sessionId} is ${status}, expected ${expectSession.status.join(" or ")}.`,
      );
    }

    const expectOpenCalls = batch.expectOpenCalls;
    if (expectOpenCalls !== undefined) this.checkOpenCalls(sessionId, expectOpenCalls);

    const timestamp = new Date().toISOString();
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
          this.insertTurn.run(
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
          );
          touched = true;
          break;
        }
        case "turn.update": {
          // Updates of one turn in a row are one UPDATE (batch-ops.ts).
          const run = turnUpdateRun(ops, i);
          i = run.last;
          this.updateTurn(sessionId, run.id, run.patch, timestamp);
          touched = true;
          break;
        }
        case "message.insert": {
          const m = op.message;
          ownedBy(m.sessionId, sessionId, "message", m.id);
          this.insertMessage.run(sessionId, m.id, m.turnId, m.role, toJson(m.content), m.createdAt);
          break;
        }
        case "toolCall.upsert": {
          const c = op.call;
          ownedBy(c.sessionId, sessionId, "tool call", c.callId);
          this.upsertToolCall.run(
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
          );
          break;
        }
        case "result.insert": {
          const r = op.record;
          ownedBy(r.sessionId, sessionId, "result", r.resultId);
          this.insertResult.run(
            sessionId,
            r.resultId,
            r.agentId,
            r.deploymentId,
            r.turnId,
            r.messageId,
            r.toolCallId,
            r.resultTool,
            r.schemaDigest,
            r.dataDigest,
            toJson(r.data),
            r.createdAt,
          );
          break;
        }
        case "approval.insert": {
          const a = op.approval;
          ownedBy(a.sessionId, sessionId, "approval", a.id);
          this.statements.get(INSERT_APPROVAL).run(approvalParams(a));
          break;
        }
        case "approval.update":
          this.updateApproval(sessionId, op.id, op.expect, op.patch, timestamp);
          break;
        default:
          throw new StoreError(
            "invalid_batch",
            `Unknown write op ${(op as { type?: unknown }).type}.`,
          );
      }
    }

    const events = this.appendEvents(sessionId, lastSeq, timestamp, batch.events);
    const newLastSeq = lastSeq + events.length;
    if (touched) {
      this.updateSession(sessionId, newLastSeq, timestamp, sessionPatch);
    } else if (events.length > 0) {
      this.setLastSeq.run(newLastSeq, sessionId);
    }
    return events;
  }

  /** Compare-and-set: the approval must be in one of the expected statuses. */
  private updateApproval(
    sessionId: string,
    id: string,
    expect: readonly ApprovalStatus[],
    patch: ApprovalPatch,
    timestamp: string,
  ) {
    const status = this.statements
      .get("SELECT status FROM approvals WHERE id = ? AND session_id = ?")
      .pluck()
      .get(id, sessionId) as ApprovalStatus | undefined;
    if (status === undefined || !expect.includes(status)) {
      throw new StoreError(
        "approval_state",
        status === undefined
          ? `Session ${sessionId} has no approval ${id}.`
          : `Approval ${id} is ${status}, expected ${expect.join(" or ")}.`,
      );
    }
    const { sql, params } = approvalUpdate(patch, timestamp);
    this.statements.get(sql).run([...params, id]);
  }

  /** Refuses the batch unless the turn's still-open calls are exactly the expected ones. */
  private checkOpenCalls(sessionId: string, expected: NonNullable<WriteBatch["expectOpenCalls"]>) {
    const open = this.openCalls.all(sessionId, expected.turnId) as string[];
    const want = new Set(expected.callIds);
    if (open.length !== want.size || open.some((id) => !want.has(id))) {
      throw new StoreError(
        "calls_changed",
        `Turn ${expected.turnId} has open calls [${open.join(", ")}], expected [${[...want].join(", ")}].`,
      );
    }
  }

  /**
   * Inserts `events` with seqs after `lastSeq`; the caller records the new last seq. Up to
   * EVENT_CHUNK rows go in one INSERT: a statement run has a fixed cost that rows share.
   */
  appendEvents(
    sessionId: string,
    lastSeq: number,
    timestamp: string,
    events: readonly NewEvent[],
  ): EventRecord[] {
    const n = events.length;
    const out: EventRecord[] = new Array(n);
    for (let start = 0; start < n; start += EVENT_CHUNK) {
      const end = Math.min(n, start + EVENT_CHUNK);
      const params: unknown[] = [];
      for (let i = start; i < end; i++) {
        const e = events[i]!;
        const seq = lastSeq + i + 1;
        const id = newEventId();
        const turnId = e.turnId;
        params.push(sessionId, seq, id, timestamp, turnId ?? null, e.type, toJson(e.data));
        out[i] =
          turnId === undefined
            ? { seq, id, timestamp, sessionId, type: e.type, data: e.data }
            : { seq, id, timestamp, sessionId, turnId, type: e.type, data: e.data };
      }
      this.insertEvents(end - start).run(params);
    }
    return out;
  }

  private insertEvents(rows: number): Statement {
    let stmt = this.eventInserts[rows];
    if (stmt === undefined) {
      stmt = this.statements.get(
        "INSERT INTO events (session_id, seq, id, timestamp, turn_id, type, data) VALUES " +
          Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?)").join(", "),
      );
      this.eventInserts[rows] = stmt;
    }
    return stmt;
  }

  private updateTurn(sessionId: string, turnId: string, patch: TurnPatch, timestamp: string) {
    let mask = 0;
    const params: unknown[] = [timestamp];
    for (let i = 0; i < TURN_FIELDS.length; i++) {
      const [key, , json] = TURN_FIELDS[i]!;
      const value = patch[key];
      if (value === undefined) continue;
      mask |= 1 << i;
      params.push(json ? toJson(value) : value);
    }
    params.push(sessionId, turnId);
    let stmt = this.turnUpdates[mask];
    if (stmt === undefined) {
      let sql = "UPDATE turns SET updated_at = ?";
      for (let i = 0; i < TURN_FIELDS.length; i++) {
        if (mask & (1 << i)) sql += `, ${TURN_FIELDS[i]![1]} = ?`;
      }
      stmt = this.statements.get(`${sql} WHERE session_id = ? AND id = ?`);
      this.turnUpdates[mask] = stmt;
    }
    if (stmt.run(params).changes === 0) {
      throw new StoreError("turn_not_active", `Session ${sessionId} has no turn ${turnId}.`);
    }
  }

  /** Records the new last seq, bumps the revision once for the batch and applies the patch. */
  private updateSession(
    sessionId: string,
    lastSeq: number,
    timestamp: string,
    patch: SessionPatch | undefined,
  ) {
    let mask = 0;
    const params: unknown[] = [lastSeq, timestamp];
    if (patch !== undefined) {
      for (let i = 0; i < SESSION_FIELDS.length; i++) {
        const [key, , json] = SESSION_FIELDS[i]!;
        const value = patch[key];
        if (value === undefined) continue;
        mask |= 1 << i;
        params.push(json ? toJson(value) : value);
      }
    }
    params.push(sessionId);
    let stmt = this.sessionUpdates[mask];
    if (stmt === undefined) {
      let sql = "UPDATE sessions SET last_seq = ?, revision = revision + 1, updated_at = ?";
      for (let i = 0; i < SESSION_FIELDS.length; i++) {
        if (mask & (1 << i)) sql += `, ${SESSION_FIELDS[i]![1]} = ?`;
      }
      stmt = this.statements.get(`${sql} WHERE id = ?`);
      this.sessionUpdates[mask] = stmt;
    }
    stmt.run(params);
  }
}
