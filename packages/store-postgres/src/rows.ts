// Row shapes as node-postgres returns them, and their mapping to the port's records (written
// once for both SQL stores in @opencomputer/sql-store's row-mapping.ts). `json` columns come back
// already parsed; `bigint` columns come back as strings (pg does not narrow int8 to number by
// default, and these all fit in a double), so they go through Number().
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

/** Parameters for `json` columns: always text, since pg would send a JS array as a PG array. */
export function toJson(value: unknown): string {
  // JSON.stringify(undefined) is undefined; the port's values are JSON, so treat it as null.
  return JSON.stringify(value) ?? "null";
}

/** A `json` column (already parsed by pg) or an int4/int8 one (a number or a string). */
type Json = unknown;
type Int = number | string;

const PG: ColumnDecoding<Json, Int> = {
  json: <T>(value: Json) => value as T,
  int: (value) => Number(value),
};

export type SessionRow = SessionColumns<Json, Int>;
export type TurnRow = TurnColumns<Json, Int>;
export type MessageRow = MessageColumns<Json>;
export type ToolCallRow = ToolCallColumns<Json, Int>;
export type ResultRow = ResultColumns<Json>;
export type EventRow = EventColumns<Json, Int>;

export const SESSION_COLUMNS = `id, project_id, agent_id, deployment_id, environment, status, source, labels,
  execution_mode, result, question, runtime, revision, last_seq, idempotency_key,
  lease_runtime_id, lease_epoch, lease_expires_at, created_at, updated_at`;

export const {
  sessionFromRow,
  turnFromRow,
  messageFromRow,
  toolCallFromRow,
  resultFromRow,
  eventFromRow,
} = rowMappers(PG);
