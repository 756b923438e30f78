// The port's records from table rows, once for every SQL store. The stores share one schema
// (snake_case columns, JSON values in their own columns) and differ only in what their driver
// hands back for two kinds of column: JSON (better-sqlite3: the text; node-postgres: already
// parsed) and integers (better-sqlite3: numbers; node-postgres: int8 as strings). A store
// gives those two decoders; the mapping itself is written once here.
import type {
  EventRecord,
  MessageRecord,
  ResultRecord,
  SessionRecord,
  ToolCallRecord,
  TurnRecord,
} from "@opencomputer/runtime";

/** How one driver returns JSON columns (`J`) and integer columns (`N`). */
export interface ColumnDecoding<J, N> {
  json<T>(value: J): T;
  int(value: N): number;
}

export const TURN_COLUMNS = `session_id, id, input, mode, status, outcome, error,
  idempotency_key, steps, created_at, updated_at, started_at, settled_at`;
export const MESSAGE_COLUMNS = "session_id, id, turn_id, role, content, created_at";
export const TOOL_CALL_COLUMNS = `session_id, call_id, turn_id, message_id, tool, input, status,
  output, error, attempts, started_at, settled_at`;
export const RESULT_COLUMNS = `session_id, result_id, agent_id, deployment_id, turn_id,
  message_id, tool_call_id, result_tool, schema_digest, data_digest, data, created_at`;
export const EVENT_COLUMNS = "session_id, seq, id, timestamp, turn_id, type, data";

export interface SessionColumns<J, N> {
  id: string;
  project_id: string;
  agent_id: string;
  deployment_id: string;
  environment: string;
  status: string;
  source: string;
  labels: J;
  execution_mode: string;
  result: J;
  question: J;
  runtime: J;
  revision: N;
  last_seq: N;
  idempotency_key: string | null;
  lease_runtime_id: string | null;
  lease_epoch: N | null;
  lease_expires_at: N | null;
  created_at: string;
  updated_at: string;
}

export function sessionFromColumns<J, N>(
  r: SessionColumns<J, N>,
  d: ColumnDecoding<J, N>,
): SessionRecord {
  return {
    id: r.id,
    projectId: r.project_id,
    agentId: r.agent_id,
    deploymentId: r.deployment_id,
    environment: r.environment,
    status: r.status as SessionRecord["status"],
    source: r.source as SessionRecord["source"],
    labels: d.json(r.labels),
    executionMode: r.execution_mode as SessionRecord["executionMode"],
    result: d.json(r.result),
    question: d.json(r.question),
    runtime: d.json(r.runtime),
    revision: d.int(r.revision),
    lastSeq: d.int(r.last_seq),
    idempotencyKey: r.idempotency_key,
    lease:
      r.lease_runtime_id === null
        ? null
        : {
            runtimeId: r.lease_runtime_id,
            epoch: d.int(r.lease_epoch!),
            expiresAt: d.int(r.lease_expires_at!),
          },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface TurnColumns<J, N> {
  session_id: string;
  id: string;
  input: J;
  mode: string;
  status: string;
  outcome: string | null;
  error: J;
  idempotency_key: string | null;
  steps: N;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  settled_at: string | null;
}

export function turnFromColumns<J, N>(r: TurnColumns<J, N>, d: ColumnDecoding<J, N>): TurnRecord {
  return {
    id: r.id,
    sessionId: r.session_id,
    input: d.json(r.input),
    mode: r.mode as TurnRecord["mode"],
    status: r.status as TurnRecord["status"],
    outcome: r.outcome,
    error: d.json(r.error),
    idempotencyKey: r.idempotency_key,
    steps: d.int(r.steps),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    settledAt: r.settled_at,
  };
}

export interface MessageColumns<J> {
  session_id: string;
  id: string;
  turn_id: string;
  role: string;
  content: J;
  created_at: string;
}

export function messageFromColumns<J, N>(
  r: MessageColumns<J>,
  d: ColumnDecoding<J, N>,
): MessageRecord {
  return {
    id: r.id,
    sessionId: r.session_id,
    turnId: r.turn_id,
    role: r.role as MessageRecord["role"],
    content: d.json(r.content),
    createdAt: r.created_at,
  };
}

export interface ToolCallColumns<J, N> {
  session_id: string;
  call_id: string;
  turn_id: string;
  message_id: string;
  tool: string;
  input: J;
  status: string;
  output: J;
  error: string | null;
  attempts: N;
  started_at: string;
  settled_at: string | null;
}

export function toolCallFromColumns<J, N>(
  r: ToolCallColumns<J, N>,
  d: ColumnDecoding<J, N>,
): ToolCallRecord {
  return {
    sessionId: r.session_id,
    callId: r.call_id,
    turnId: r.turn_id,
    messageId: r.message_id,
    tool: r.tool,
    input: d.json(r.input),
    status: r.status as ToolCallRecord["status"],
    output: d.json(r.output),
    error: r.error,
    attempts: d.int(r.attempts),
    startedAt: r.started_at,
    settledAt: r.settled_at,
  };
}

export interface ResultColumns<J> {
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
  data: J;
  created_at: string;
}

export function resultFromColumns<J, N>(
  r: ResultColumns<J>,
  d: ColumnDecoding<J, N>,
): ResultRecord {
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
    data: d.json(r.data),
    createdAt: r.created_at,
  };
}

export interface EventColumns<J, N> {
  session_id: string;
  seq: N;
  id: string;
  timestamp: string;
  turn_id: string | null;
  type: string;
  data: J;
}

export function eventFromColumns<J, N>(
  r: EventColumns<J, N>,
  d: ColumnDecoding<J, N>,
): EventRecord {
  const base = { seq: d.int(r.seq), id: r.id, timestamp: r.timestamp, sessionId: r.session_id };
  // turnId is absent, not null, on session-level events.
  // Rows hold only what the engine wrote through the typed NewEvent: trusted as such here.
  return (
    r.turn_id === null
      ? { ...base, type: r.type, data: d.json(r.data) }
      : { ...base, turnId: r.turn_id, type: r.type, data: d.json(r.data) }
  ) as EventRecord;
}

/** Every mapping bound to one driver's decoding: what a store's rows.ts exports. */
export function rowMappers<J, N>(d: ColumnDecoding<J, N>) {
  return {
    sessionFromRow: (r: SessionColumns<J, N>): SessionRecord => sessionFromColumns(r, d),
    turnFromRow: (r: TurnColumns<J, N>): TurnRecord => turnFromColumns(r, d),
    messageFromRow: (r: MessageColumns<J>): MessageRecord => messageFromColumns(r, d),
    toolCallFromRow: (r: ToolCallColumns<J, N>): ToolCallRecord => toolCallFromColumns(r, d),
    resultFromRow: (r: ResultColumns<J>): ResultRecord => resultFromColumns(r, d),
    eventFromRow: (r: EventColumns<J, N>): EventRecord => eventFromColumns(r, d),
  };
}
