// Row shapes as SQLite returns them, and their mapping to the port's records (written once for
// both SQL stores in @opencomputer/sql-store's row-mapping.ts). JSON values are stored as JSON
// text and parsed back, so callers get exactly the value they wrote.
import type { SessionRecord } from "@opencomputer/runtime";
import {
  type ColumnDecoding,
  type EventColumns,
  type MessageColumns,
  type ResultColumns,
  rowMappers,
  type SessionColumns,
  type ToolCallColumns,
  type TurnColumns,
} from "@opencomputer/sql-store";

export {
  EVENT_COLUMNS,
  MESSAGE_COLUMNS,
  RESULT_COLUMNS,
  TOOL_CALL_COLUMNS,
  TURN_COLUMNS,
} from "@opencomputer/sql-store";

export function toJson(value: unknown): string {
  // A third of a run's JSON columns are null (a new session's result and question, a turn's
  // error, a started call's output): no call for them.
  if (value === null) return "null";
  // JSON.stringify(undefined) is undefined; the port's values are JSON, so treat it as null.
  return JSON.stringify(value) ?? "null";
}

export function fromJson<T>(text: string): T {
  if (text === "null") return null as T;
  return JSON.parse(text) as T;
}

const SQLITE: ColumnDecoding<string, number> = { json: fromJson, int: (n) => n };

export type SessionRow = SessionColumns<string, number>;
export type TurnRow = TurnColumns<string, number>;
export type MessageRow = MessageColumns<string>;
export type ToolCallRow = ToolCallColumns<string, number>;
export type ResultRow = ResultColumns<string>;
export type EventRow = EventColumns<string, number>;

export const {
  sessionFromRow,
  turnFromRow,
  messageFromRow,
  toolCallFromRow,
  resultFromRow,
  eventFromRow,
} = rowMappers(SQLITE);

/**
 * The record `sessionFromRow` would read back after INSERT_SESSION with `params` (from
 * sessionParams), without the read: the JSON columns are parsed from the very text inserted, so
 * a value that is not plain JSON comes back as stored.
 */
export function sessionAsInserted(s: SessionRecord, params: readonly unknown[]): SessionRecord {
  return {
    ...s,
    labels: fromJson(params[6] as string),
    result: fromJson(params[8] as string),
    question: fromJson(params[9] as string),
    runtime: fromJson(params[10] as string),
    lease: s.lease === null ? null : { ...s.lease },
    lastSeq: params[12] as number,
  };
}

/** Positional parameters of INSERT_SESSION, in column order. */
export function sessionParams(s: SessionRecord, lastSeq: number): unknown[] {
  return [
    s.id,
    s.agentId,
    s.deploymentId,
    s.environment,
    s.status,
    s.source,
    toJson(s.labels),
    s.executionMode,
    toJson(s.result),
    toJson(s.question),
    toJson(s.runtime),
    s.revision,
    lastSeq,
    s.idempotencyKey,
    s.lease?.runtimeId ?? null,
    s.lease?.epoch ?? null,
    s.lease?.expiresAt ?? null,
    s.createdAt,
    s.updatedAt,
    s.projectId,
  ];
}

export const INSERT_SESSION = `INSERT INTO sessions (id, agent_id, deployment_id, environment,
  status, source, labels, execution_mode, result, question, runtime, revision, last_seq,
  idempotency_key, lease_runtime_id, lease_epoch, lease_expires_at, created_at, updated_at,
  project_id)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
