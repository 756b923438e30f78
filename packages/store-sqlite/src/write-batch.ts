// One WriteBatch, run inside a transaction the caller opened (BEGIN IMMEDIATE): guards first,
// then the ops in order, then the events with the next seqs (invariant 1). Any throw rolls the
// whole batch back. The row changes go through a RowWriter (row-writer.ts): at once, or written
// behind under group commit; results and approvals, which are rare and checked by SQLite's own
// constraints, always run at once.

import {
  type ApprovalPatch,
  type ApprovalStatus,
  type EventRecord,
  isoNow,
  type MessageRecord,
  type NewEvent,
  type SessionPatch,
  StoreError,
  type ToolCallRecord,
  type TurnPatch,
  type TurnRecord,
  type TurnStatus,
  type WriteBatch,
} from "@opencomputer/runtime";
import {
  mergePatch,
  newEventId,
  ownedBy,
  RESULT_INSERT_COLUMNS,
  resultValues,
  SESSION_FIELDS,
  TURN_FIELDS,
  turnUpdateRun,
} from "@opencomputer/sql-store";
import { approvalParams, approvalUpdate, INSERT_APPROVAL } from "./approval-rows.ts";
import { EVENT_CHUNK, type RowWriter } from "./row-writer.ts";
import { toJson } from "./rows.ts";
import type { StatementCache } from "./statements.ts";

const INSERT_RESULT = `INSERT INTO results (${RESULT_INSERT_COLUMNS.join(", ")})
  VALUES (${RESULT_INSERT_COLUMNS.map(() => "?").join(", ")})`;

export class BatchWriter {
  constructor(
    private readonly statements: StatementCache,
    private readonly rows: RowWriter,
  ) {}

  write(sessionId: string, batch: WriteBatch): EventRecord[] {
    const lastSeq = this.guard(sessionId, batch);
    const timestamp = isoNow();
    const { touched, sessionPatch } = this.applyOps(sessionId, batch.ops, timestamp);
    const events = this.appendEvents(sessionId, lastSeq, timestamp, batch.events);
    const newLastSeq = lastSeq + events.length;
    if (touched) {
      this.updateSession(sessionId, newLastSeq, timestamp, sessionPatch);
    } else if (events.length > 0) {
      this.rows.setLastSeq(sessionId, newLastSeq);
    }
    return events;
  }

  /** The batch's guards (session, fence, turn, session status, open calls); the last seq. */
  private guard(sessionId: string, batch: WriteBatch): number {
    const expectTurn = batch.expectTurn;
    const row = this.rows.guard(sessionId, expectTurn?.id);
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
      (turnStatus == null || !expectTurn.status.includes(turnStatus as TurnStatus))
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
    return lastSeq;
  }

  /** The ops in order; whether the session row changes, and its merged patch. */
  private applyOps(
    sessionId: string,
    ops: WriteBatch["ops"],
    timestamp: string,
  ): { touched: boolean; sessionPatch: SessionPatch | undefined } {
    let touched = false;
    let sessionPatch: SessionPatch | undefined;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      switch (op.type) {
        case "session.update":
          touched = true;
          sessionPatch = sessionPatch === undefined ? op.patch : mergePatch(sessionPatch, op.patch);
          break;
        case "turn.insert":
          this.insertTurn(sessionId, op.turn);
          touched = true;
          break;
        case "turn.update": {
          // Updates of one turn in a row are one UPDATE (batch-ops.ts).
          const run = turnUpdateRun(ops, i);
          i = run.last;
          this.updateTurn(sessionId, run.id, run.patch, timestamp);
          touched = true;
          break;
        }
        case "message.insert":
          this.insertMessage(sessionId, op.message);
          break;
        case "toolCall.upsert":
          this.upsertToolCall(sessionId, op.call);
          break;
        case "result.insert": {
          const r = op.record;
          ownedBy(r.sessionId, sessionId, "result", r.resultId);
          this.statements.get(INSERT_RESULT, sessionId).run(resultValues(r, toJson));
          break;
        }
        case "approval.insert": {
          const a = op.approval;
          ownedBy(a.sessionId, sessionId, "approval", a.id);
          this.statements.get(INSERT_APPROVAL, sessionId).run(approvalParams(a));
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
    return { touched, sessionPatch };
  }

  private insertTurn(sessionId: string, t: TurnRecord) {
    ownedBy(t.sessionId, sessionId, "turn", t.id);
    this.rows.insertTurn([
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
    ]);
  }

  private insertMessage(sessionId: string, m: MessageRecord) {
    ownedBy(m.sessionId, sessionId, "message", m.id);
    this.rows.insertMessage([sessionId, m.id, m.turnId, m.role, toJson(m.content), m.createdAt]);
  }

  private upsertToolCall(sessionId: string, c: ToolCallRecord) {
    ownedBy(c.sessionId, sessionId, "tool call", c.callId);
    this.rows.upsertToolCall([
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
    ]);
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
      .get("SELECT status FROM approvals WHERE id = ? AND session_id = ?", sessionId)
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
    this.statements.get(sql, sessionId).run([...params, id]);
  }

  /** Refuses the batch unless the turn's still-open calls are exactly the expected ones. */
  private checkOpenCalls(sessionId: string, expected: NonNullable<WriteBatch["expectOpenCalls"]>) {
    const open = this.rows.openCalls(sessionId, expected.turnId);
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
        out[i] = (
          turnId === undefined
            ? { seq, id, timestamp, sessionId, type: e.type, data: e.data }
            : { seq, id, timestamp, sessionId, turnId, type: e.type, data: e.data }
        ) as EventRecord;
      }
      this.rows.insertEvents(params, end - start);
    }
    return out;
  }

  private updateTurn(sessionId: string, turnId: string, patch: TurnPatch, timestamp: string) {
    let mask = 0;
    const values: unknown[] = [];
    for (let i = 0; i < TURN_FIELDS.length; i++) {
      const [key, , json] = TURN_FIELDS[i]!;
      const value = patch[key];
      if (value === undefined) continue;
      mask |= 1 << i;
      values.push(json ? toJson(value) : value);
    }
    this.rows.updateTurn(sessionId, turnId, mask, values, timestamp);
  }

  /** Records the new last seq, bumps the revision once for the batch and applies the patch. */
  private updateSession(
    sessionId: string,
    lastSeq: number,
    timestamp: string,
    patch: SessionPatch | undefined,
  ) {
    let mask = 0;
    const values: unknown[] = [];
    if (patch !== undefined) {
      for (let i = 0; i < SESSION_FIELDS.length; i++) {
        const [key, , json] = SESSION_FIELDS[i]!;
        const value = patch[key];
        if (value === undefined) continue;
        mask |= 1 << i;
        values.push(json ? toJson(value) : value);
      }
    }
    this.rows.updateSession(sessionId, lastSeq, timestamp, mask, values);
  }
}
