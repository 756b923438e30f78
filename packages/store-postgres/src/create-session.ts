// The statement that creates a session: the row, and its first events in the same statement
// (so one round trip and one transaction), or nothing when the project's idempotency key is
// taken (ON CONFLICT DO NOTHING: the caller then reads the existing session).
import type { NewEvent, SessionRecord } from "@opencomputer/runtime";
import { isoNow, StoreError } from "@opencomputer/runtime";
import { DELIVERED_TYPES } from "@opencomputer/sql-store";
import { labelIndex } from "./label-index.ts";
import { SESSION_COLUMNS, toJson } from "./rows.ts";
import { insertEvents, numberEvents } from "./write-batch.ts";

/** The INSERT of `session` with `events`; RETURNING the row only when it was inserted. */
export function createSessionStatement(
  session: SessionRecord,
  events: readonly NewEvent[],
): { sql: string; params: unknown[] } {
  // Only `oc_write` adds the rows some events bring along (usage steps, the delivery outbox; see
  // write-function.ts): a session's first events are never such events, and are refused if they
  // were rather than written without them.
  const withSideRows = events.find(
    (e) => e.type === "usage.recorded" || DELIVERED_TYPES.includes(e.type),
  );
  if (withSideRows) {
    throw new StoreError(
      "invalid_batch",
      `createSession appends a session's first events; ${withSideRows.type} is appended with ` +
        "apply once the session exists.",
    );
  }
  const params: unknown[] = [
    session.id,
    session.agentId,
    session.deploymentId,
    session.environment,
    session.status,
    session.source,
    toJson(session.labels),
    labelIndex(session.labels),
    session.executionMode,
    toJson(session.result),
    toJson(session.question),
    toJson(session.runtime),
    session.revision,
    events.length,
    session.idempotencyKey,
    session.lease?.runtimeId ?? null,
    session.lease?.epoch ?? null,
    session.lease?.expiresAt ?? null,
    session.createdAt,
    session.updatedAt,
    session.projectId,
  ];
  let sql = `INSERT INTO sessions (id, agent_id, deployment_id, environment, status, source,
      labels, label_index, execution_mode, result, question, runtime, revision, last_seq,
      idempotency_key, lease_runtime_id, lease_epoch, lease_expires_at, created_at,
      updated_at, project_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
      $18, $19, $20, $21)
    ON CONFLICT (project_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING ${SESSION_COLUMNS}`;
  const appended = numberEvents(session.id, 0, isoNow(), events);
  if (appended.length > 0) {
    // One statement: the events go in only with the row, whose RETURNING is the read back.
    sql = `WITH created AS (${sql}),
      appended AS (${insertEvents(params, appended, "EXISTS (SELECT 1 FROM created)")})
      SELECT * FROM created`;
  }
  return { sql, params };
}
