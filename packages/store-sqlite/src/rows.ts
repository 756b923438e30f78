// Row shapes as SQLite returns them, and their mapping to the port's records. JSON values are
// stored as JSON text and parsed back, so callers get exactly the value they wrote.
import type {
  EventRecord,
  MessageRecord,
  ResultRecord,
  SessionRecord,
  ToolCallRecord,
  TurnRecord,
} from "@opencomputer/runtime";

export function toJson(value: unknown): string {
  // JSON.stringify(undefined) is undefined; the port's values are JSON, so treat it as null.
  return JSON.stringify(value) ?? "null";
}

export function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export interface SessionRow {
  id: string;
  project_id: string;
  agent_id: string;
  deployment_id: string;
  environment: string;
  status: string;
  source: string;
  labels: string;
  execution_mode: string;
  result: string;
  question: string;
  runtime: string;
  revision: number;
  last_seq: number;
  idempotency_key: string | null;
  lease_runtime_id: string | null;
  lease_epoch: number | null;
  lease_expires_at: number | null;
  created_at: string;
  updated_at: string;
}

export function sessionFromRow(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    projectId: r.project_id,
    agentId: r.agent_id,
    deploymentId: r.deployment_id,
    environment: r.environment,
    status: r.status as SessionRecord["status"],
    source: r.source as SessionRecord["source"],
    labels: fromJson(r.labels),
    executionMode: r.execution_mode as SessionRecord["executionMode"],
    result: fromJson(r.result),
    question: fromJson(r.question),
    runtime: fromJson(r.runtime),
    revision: r.revision,
    lastSeq: r.last_seq,
    idempotencyKey: r.idempotency_key,
    lease:
      r.lease_runtime_id === null
        ? null
        : { runtimeId: r.lease_runtime_id, epoch: r.lease_epoch!, expiresAt: r.lease_expires_at! },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * The record `sessionFromRow` would read back after INSERT_SESSION, without the read: the JSON
 * columns go through the same text, so a value that is not plain JSON comes back as stored.
 */
export function sessionAsInserted(s: SessionRecord, lastSeq: number): SessionRecord {
  return {
    ...s,
    labels: fromJson(toJson(s.labels)),
    result: fromJson(toJson(s.result)),
    question: fromJson(toJson(s.question)),
    runtime: fromJson(toJson(s.runtime)),
    lease: s.lease === null ? null : { ...s.lease },
    lastSeq,
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

export interface TurnRow {
  session_id: string;
  id: string;
  input: string;
  mode: string;
  status: string;
  outcome: string | null;
  error: string;
  idempotency_key: string | null;
  steps: number;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  settled_at: string | null;
}

export const TURN_COLUMNS = `session_id, id, input, mode, status, outcome, error,
  idempotency_key, steps, created_at, updated_at, started_at, settled_at`;

export function turnFromRow(r: TurnRow): TurnRecord {
  return {
    id: r.id,
    sessionId: r.session_id,
    input: fromJson(r.input),
    mode: r.mode as TurnRecord["mode"],
    status: r.status as TurnRecord["status"],
    outcome: r.outcome,
    error: fromJson(r.error),
    idempotencyKey: r.idempotency_key,
    steps: r.steps,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    settledAt: r.settled_at,
  };
}

export interface MessageRow {
  session_id: string;
  id: string;
  turn_id: string;
  role: string;
  content: string;
  created_at: string;
}

export const MESSAGE_COLUMNS = "session_id, id, turn_id, role, content, created_at";

export function messageFromRow(r: MessageRow): MessageRecord {
  return {
    id: r.id,
    sessionId: r.session_id,
    turnId: r.turn_id,
    role: r.role as MessageRecord["role"],
    content: fromJson(r.content),
    createdAt: r.created_at,
  };
}

export interface ToolCallRow {
  session_id: string;
  call_id: string;
  turn_id: string;
  message_id: string;
  tool: string;
  input: string;
  status: string;
  output: string;
  error: string | null;
  attempts: number;
  started_at: string;
  settled_at: string | null;
}

export const TOOL_CALL_COLUMNS = `session_id, call_id, turn_id, message_id, tool, input, status,
  output, error, attempts, started_at, settled_at`;

export function toolCallFromRow(r: ToolCallRow): ToolCallRecord {
  return {
    sessionId: r.session_id,
    callId: r.call_id,
    turnId: r.turn_id,
    messageId: r.message_id,
    tool: r.tool,
    input: fromJson(r.input),
    status: r.status as ToolCallRecord["status"],
    output: fromJson(r.output),
    error: r.error,
    attempts: r.attempts,
    startedAt: r.started_at,
    settledAt: r.settled_at,
  };
}

export interface ResultRow {
  session_id: string;
  result_id: string;
  agent_id: string;
  deployment_id: string;
  turn_id: string;
  message_id: string;
  tool_call_id: string;
  result_tool: string;
  schema_digest: string;
  data_digest: string;
  data: string;
  created_at: string;
}

export const RESULT_COLUMNS = `session_id, result_id, agent_id, deployment_id, turn_id,
  message_id, tool_call_id, result_tool, schema_digest, data_digest, data, created_at`;

export function resultFromRow(r: ResultRow): ResultRecord {
  return {
    resultId: r.result_id,
    agentId: r.agent_id,
    deploymentId: r.deployment_id,
    sessionId: r.session_id,
    turnId: r.turn_id,
    messageId: r.message_id,
    toolCallId: r.tool_call_id,
    resultTool: r.result_tool,
    schemaDigest: r.schema_digest,
    dataDigest: r.data_digest,
    data: fromJson(r.data),
    createdAt: r.created_at,
  };
}

export interface EventRow {
  session_id: string;
  seq: number;
  id: string;
  timestamp: string;
  turn_id: string | null;
  type: string;
  data: string;
}

export const EVENT_COLUMNS = "session_id, seq, id, timestamp, turn_id, type, data";

export function eventFromRow(r: EventRow): EventRecord {
  return r.turn_id === null
    ? {
        seq: r.seq,
        id: r.id,
        timestamp: r.timestamp,
        sessionId: r.session_id,
        type: r.type,
        data: fromJson(r.data),
      }
    : {
        seq: r.seq,
        id: r.id,
        timestamp: r.timestamp,
        sessionId: r.session_id,
        turnId: r.turn_id,
        type: r.type,
        data: fromJson(r.data),
      };
}
