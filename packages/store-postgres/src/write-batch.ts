// A WriteBatch as one call of `oc_write` (write-function.ts): the guards as parameters, the ops
// as one JSON array (each JSON-valued field as the text of its value: see write-function.ts),
// the merged session patch as one row, the events as parallel arrays. The seqs are the
// function's to give (it holds the session row locked); the ids and the timestamp are made
// here, so the events come back without reading them.

import {
  type ApprovalPatch,
  type ApprovalRecord,
  type EventRecord,
  isoNow,
  type NewEvent,
  queuesWork,
  type SessionPatch,
  StoreError,
  type TurnPatch,
  type WriteBatch,
  type WriteOp,
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
import { APPROVAL_FIELDS } from "./approvals.ts";
import { labelIndex } from "./label-index.ts";
import { toJson } from "./rows.ts";
import { textArray } from "./text-array.ts";

/** What the call writes besides the batch. */
export interface BatchEnd {
  /** The NOTIFY channel (notify.ts), or null to send none. */
  channel: string | null;
  /** Take or extend the lease for this runtime, expiring at `expiresAt`, as of `now`. */
  claim?: { runtimeId: string; expiresAt: number; now: number };
}

export interface WriteRow {
  base_seq: string;
  lease_epoch: string;
  claimed: boolean;
}

/** An op as write-function.ts reads it: its kind `k` and its columns. */
export type DbOp = { k: string } & Record<string, unknown>;

/** A write's parts as `oc_write` and `oc_write_many` (write-many.ts) take them. */
export interface WriteParts {
  sessionId: string;
  claim: BatchEnd["claim"];
  fence: WriteBatch["fence"];
  expectTurn: WriteBatch["expectTurn"];
  expectSession: WriteBatch["expectSession"];
  expectOpenCalls: WriteBatch["expectOpenCalls"];
  /** The ops as write-function.ts reads them, each with its kind `k`. */
  ops: DbOp[];
  /** The session patch's field mask, -1 when the write leaves the row's fields alone. */
  sessionMask: number;
  sessionRow: string | null;
  ids: string[];
  turns: (string | undefined)[];
  types: string[];
  data: string[];
  timestamp: string;
  channel: string | null;
  work: boolean;
  /**
   * Whether `oc_write_many` can take the write with others: it changes the session row (so one
   * UPDATE locks and checks it), has no approval op (their compare-and-set stays per write), and
   * no two of its ops touch one turn or one tool call (a set-based statement sees none of its
   * own rows).
   */
  combinable: boolean;
}

export interface WriteCall {
  parts: WriteParts;
  /** The events as recorded after `lastSeq`. */
  events: (lastSeq: number) => EventRecord[];
}

/** The parameters of write-many.ts WRITE_CALL (`oc_write`) for `parts`. */
export function writeParams(p: WriteParts): unknown[] {
  const { claim, fence, expectTurn, expectSession, expectOpenCalls } = p;
  return [
    p.sessionId,
    claim?.runtimeId ?? null,
    claim?.expiresAt ?? null,
    claim?.now ?? null,
    fence?.runtimeId ?? null,
    fence?.epoch ?? null,
    expectTurn?.id ?? null,
    expectTurn ? textArray(expectTurn.status) : null,
    expectSession ? textArray(expectSession.status) : null,
    expectOpenCalls?.turnId ?? null,
    expectOpenCalls ? textArray(expectOpenCalls.callIds) : null,
    JSON.stringify(p.ops),
    p.sessionMask,
    p.sessionRow,
    textArray(p.ids),
    textArray(p.turns),
    textArray(p.types),
    textArray(p.data),
    p.timestamp,
    p.channel,
    p.work,
  ];
}

/** WriteParts#combinable for a batch whose ops are `ops`, as write-function.ts reads them. */
function combinable(ops: DbOp[], changesRow: boolean): boolean {
  if (!changesRow) return false;
  const keys = new Set<string>();
  for (const op of ops as (DbOp & { id?: string; call_id?: string })[]) {
    if (op.k === "approval.insert" || op.k === "approval.update") return false;
    const key =
      op.k === "turn.insert" || op.k === "turn.update"
        ? `t ${op.id}`
        : op.k === "toolCall.upsert"
          ? `c ${op.call_id}`
          : null;
    if (key === null) continue;
    if (keys.has(key)) return false;
    keys.add(key);
  }
  return true;
}

/** `batch` as one write: its parts, and its events once numbered. */
export function writeCall(sessionId: string, batch: WriteBatch, end: BatchEnd): WriteCall {
  const timestamp = isoNow();
  const { fence, expectTurn, expectSession, expectOpenCalls } = batch;
  const ops: DbOp[] = [];
  let sessionPatch: SessionPatch | undefined;
  let touched = false;
  const list = batch.ops;
  for (let i = 0; i < list.length; i++) {
    const op = list[i]!;
    if (op.type === "session.update") {
      touched = true;
      sessionPatch = sessionPatch === undefined ? op.patch : mergePatch(sessionPatch, op.patch);
    } else if (op.type === "turn.update") {
      // Updates of one turn in a row are one UPDATE (batch-ops.ts).
      const run = turnUpdateRun(list, i);
      i = run.last;
      ops.push(turnUpdate(run.id, run.patch));
      touched = true;
    } else {
      // Every write of a turn updates the session row too (its revision).
      if (op.type === "turn.insert") touched = true;
      ops.push(dbOp(sessionId, op));
    }
  }
  const ids = batch.events.map(newEventId);
  const events = batch.events;
  const parts: WriteParts = {
    sessionId,
    claim: end.claim,
    fence,
    expectTurn,
    expectSession,
    expectOpenCalls,
    ops,
    sessionMask: touched ? maskOf(SESSION_FIELDS, sessionPatch ?? {}) : -1,
    sessionRow: touched ? sessionRow(sessionPatch ?? {}) : null,
    ids,
    turns: events.map((e) => e.turnId),
    types: events.map((e) => e.type),
    data: events.map((e) => toJson(e.data)),
    timestamp,
    channel: events.length > 0 ? end.channel : null,
    // Work for other processes only when no lease comes with it: a writer that claims or holds
    // the lease runs the turns it queues (its actor reads the queue after every turn), so the
    // others would only look, find the lease taken and back off.
    work: queuesWork(events) && end.claim === undefined && fence === undefined,
    combinable: combinable(ops, touched || events.length > 0 || end.claim !== undefined),
  };
  return {
    parts,
    events: (lastSeq) =>
      events.map((e, i): EventRecord => {
        const seq = lastSeq + i + 1;
        const id = ids[i]!;
        return (
          e.turnId === undefined
            ? { seq, id, timestamp, sessionId, type: e.type, data: e.data }
            : { seq, id, timestamp, sessionId, turnId: e.turnId, type: e.type, data: e.data }
        ) as EventRecord;
      }),
  };
}

type Fields = readonly (readonly [string, string, boolean])[];

function maskOf(fields: Fields, patch: object): number {
  let mask = 0;
  for (let bit = 0; bit < fields.length; bit++) {
    if ((patch as Record<string, unknown>)[fields[bit]![0]] !== undefined) mask |= 1 << bit;
  }
  return mask;
}

/** The patch's set fields by column, JSON-valued ones as their text. */
function columns(fields: Fields, patch: object): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [key, column, json] of fields) {
    const value = (patch as Record<string, unknown>)[key];
    if (value !== undefined) row[column] = json ? toJson(value) : value;
  }
  return row;
}

function sessionRow(patch: SessionPatch): string {
  const row = columns(SESSION_FIELDS, patch);
  if (patch.labels !== undefined) row.label_index = labelIndex(patch.labels);
  return JSON.stringify(row);
}

function turnUpdate(id: string, patch: TurnPatch): DbOp {
  return { k: "turn.update", id, mask: maskOf(TURN_FIELDS, patch), ...columns(TURN_FIELDS, patch) };
}

function approvalUpdate(op: Extract<WriteOp, { type: "approval.update" }>): DbOp {
  const patch: ApprovalPatch = op.patch;
  return {
    k: "approval.update",
    id: op.id,
    expect: [...op.expect],
    mask: maskOf(APPROVAL_FIELDS, patch),
    ...columns(APPROVAL_FIELDS, patch),
  };
}

function approvalInsert(sessionId: string, a: ApprovalRecord): DbOp {
  ownedBy(a.sessionId, sessionId, "approval", a.id);
  return {
    k: "approval.insert",
    id: a.id,
    turn_id: a.turnId,
    tool_call_id: a.toolCallId,
    agent_id: a.agentId,
    deployment_id: a.deploymentId,
    tool: a.tool,
    input: toJson(a.input),
    card: toJson(a.card),
    digest: a.digest,
    status: a.status,
    decision: toJson(a.decision),
    outcome: toJson(a.outcome),
    error: a.error,
    attempts: a.attempts,
    claimed_by: a.claimedBy,
    claimed_at: a.claimedAt,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

/** An op other than session.update and turn.update, as write-function.ts reads it. */
function dbOp(sessionId: string, op: WriteOp): DbOp {
  switch (op.type) {
    case "turn.insert": {
      const t = op.turn;
      ownedBy(t.sessionId, sessionId, "turn", t.id);
      return {
        k: op.type,
        id: t.id,
        input: toJson(t.input),
        mode: t.mode,
        status: t.status,
        outcome: t.outcome,
        error: toJson(t.error),
        idempotency_key: t.idempotencyKey,
        steps: t.steps,
        created_at: t.createdAt,
        updated_at: t.updatedAt,
        started_at: t.startedAt,
        settled_at: t.settledAt,
      };
    }
    case "message.insert": {
      const m = op.message;
      ownedBy(m.sessionId, sessionId, "message", m.id);
      return {
        k: op.type,
        id: m.id,
        turn_id: m.turnId,
        role: m.role,
        content: toJson(m.content),
        created_at: m.createdAt,
      };
    }
    case "toolCall.upsert": {
      const c = op.call;
      ownedBy(c.sessionId, sessionId, "tool call", c.callId);
      return {
        k: op.type,
        call_id: c.callId,
        turn_id: c.turnId,
        message_id: c.messageId,
        tool: c.tool,
        input: toJson(c.input),
        status: c.status,
        output: toJson(c.output),
        error: c.error,
        attempts: c.attempts,
        started_at: c.startedAt,
        settled_at: c.settledAt,
      };
    }
    case "result.insert": {
      const r = op.record;
      ownedBy(r.sessionId, sessionId, "result", r.resultId);
      const values = resultValues(r, toJson);
      const row: DbOp = { k: op.type };
      RESULT_INSERT_COLUMNS.forEach((column, i) => {
        if (column !== "session_id") row[column] = values[i];
      });
      return row;
    }
    case "approval.insert":
      return approvalInsert(sessionId, op.approval);
    case "approval.update":
      return approvalUpdate(op);
    default:
      throw new StoreError("invalid_batch", `Unknown write op ${(op as { type?: unknown }).type}.`);
  }
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
    const id = newEventId();
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
