// Row shapes as node-postgres returns them, and their mapping to the port's records. `json`
// columns come back already parsed; `bigint` columns come back as strings (pg does not narrow
// int8 to number by default, and these all fit in a double), so they go through Number().
import type {
  EventRecord,
  MessageRecord,
  ResultRecord,
  SessionRecord,
  ToolCallRecord,
  TurnRecord,
} from "@opencomputer/runtime";

type Int8 = string;

/** Parameters for `json` columns: always text, since pg would send a JS array as a PG array. */
export function toJson(value: unknown): string {
  // JSON.stringify(undefined) is undefined; the port's values are JSON, so treat it as null.
  return JSON.stringify(value) ?? "null";
}

export interface SessionRow {
  id: string;
  project_id: string;
  agent_id: string;
  deployment_id: string;
  environment: string;
  status: string;
  source: string;
  labels: Record<string, string>;
  execution_mode: string;
  result: SessionRecord["result"];
  question: SessionRecord["question"];
  runtime: SessionRecord["runtime"];
  revision: Int8;
  last_seq: Int8;
  idempotency_key: string | null;
  lease_runtime_id: string | null;
  lease_epoch: Int8 | null;
  lease_expires_at: Int8 | null;
  created_at: string;
  updated_at: string;
}

export const SESSION_COLUMNS = `id, project_id, agent_id, deployment_id, environment, status, source, labels,
  execution_mode, result, question, runtime, revision, last_seq, idempotency_key,
  lease_runtime_id, lease_epoch, lease_expires_at, created_at, updated_at`;

export function sessionFromRow(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    projectId: r.project_id,
    agentId: r.agent_id,
    deploymentId: r.deployment_id,
    environment: r.environment,
    status: r.status as SessionRecord["status"],
    source: r.source as SessionRecord["source"],
    labels: r.labels,
    executionMode: r.execution_mode as SessionRecord["executionMode"],
    result: r.result,
    question: r.question,
    runtime: r.runtime,
    revision: Number(r.revision),
    lastSeq: Number(r.last_seq),
    idempotencyKey: r.idempotency_key,
    lease:
      r.lease_runtime_id === null
        ? null
        : {
            runtimeId: r.lease_runtime_id,
            epoch: Number(r.lease_epoch),
            expiresAt: Number(r.lease_expires_at),
          },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface TurnRow {
  session_id: string;
  id: string;
  input: TurnRecord["input"];
  mode: string;
  status: string;
  outcome: string | null;
  error: TurnRecord["error"];
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
    input: r.input,
    mode: r.mode as TurnRecord["mode"],
    status: r.status as TurnRecord["status"],
    outcome: r.outcome,
    error: r.error,
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
  content: MessageRecord["content"];
  created_at: string;
}

export const MESSAGE_COLUMNS = "session_id, id, turn_id, role, content, created_at";

export function messageFromRow(r: MessageRow): MessageRecord {
  return {
    id: r.id,
    sessionId: r.session_id,
    turnId: r.turn_id,
    role: r.role as MessageRecord["role"],
    content: r.content,
    createdAt: r.created_at,
  };
}

export interface ToolCallRow {
  session_id: string;
  call_id: string;
  turn_id: string;
  message_id: string;
  tool: string;
  input: ToolCallRecord["input"];
  status: string;
  output: ToolCallRecord["output"];
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
    input: r.input,
    status: r.status as ToolCallRecord["status"],
    output: r.output,
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
  data: ResultRecord["data"];
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
    data: r.data,
    createdAt: r.created_at,
  };
}

export interface EventRow {
  session_id: string;
  seq: Int8;
  id: string;
  timestamp: string;
  turn_id: string | null;
  type: string;
  data: EventRecord["data"];
}

export const EVENT_COLUMNS = "session_id, seq, id, timestamp, turn_id, type, data";

export function eventFromRow(r: EventRow): EventRecord {
  const base = { seq: Number(r.seq), id: r.id, timestamp: r.timestamp, sessionId: r.session_id };
  // `turnId` is absent, not undefined, when the event has none (the records compare strictly).
  return r.turn_id === null
    ? { ...base, type: r.type, data: r.data }
    : { ...base, turnId: r.turn_id, type: r.type, data: r.data };
}
