// Rows of the trigger tables (schedule runs, webhooks, webhook requests) → the port's records,
// written once for both SQL stores. Booleans are integers 0/1 and JSON is text in both schemas;
// node-postgres returns int8 as strings, hence `Number` on every integer.
import type { ScheduleRunRow, WebhookRequestRow, WebhookRow } from "@opencomputer/runtime";

export type Row = Record<string, unknown>;

const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const intOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export const SCHEDULE_RUN_COLUMNS = `id, project_id, environment, agent_id, schedule_id,
  intended_at, timezone, manual, status, attempt, deployment_id, session_id, turn_id, error,
  claimed_by, claim_expires_at, created_at, updated_at`;

export function scheduleRunFromRow(r: Row): ScheduleRunRow {
  return {
    id: str(r.id),
    projectId: str(r.project_id),
    environment: str(r.environment),
    agentId: str(r.agent_id),
    scheduleId: str(r.schedule_id),
    intendedAt: str(r.intended_at),
    timezone: str(r.timezone),
    manual: Number(r.manual) === 1,
    status: str(r.status) as ScheduleRunRow["status"],
    attempt: Number(r.attempt),
    deploymentId: strOrNull(r.deployment_id),
    sessionId: strOrNull(r.session_id),
    turnId: strOrNull(r.turn_id),
    error: strOrNull(r.error),
    claimedBy: strOrNull(r.claimed_by),
    claimExpiresAt: intOrNull(r.claim_expires_at),
    createdAt: str(r.created_at),
    updatedAt: str(r.updated_at),
  };
}

export const WEBHOOK_COLUMNS = `id, project_id, environment, agent_id, name, enabled,
  token_hash, created_at, updated_at, token_rotated_at`;

export function webhookFromRow(r: Row): WebhookRow {
  return {
    id: str(r.id),
    projectId: str(r.project_id),
    environment: str(r.environment),
    agentId: str(r.agent_id),
    name: str(r.name),
    enabled: Number(r.enabled) === 1,
    tokenHash: str(r.token_hash),
    createdAt: str(r.created_at),
    updatedAt: str(r.updated_at),
    tokenRotatedAt: strOrNull(r.token_rotated_at),
  };
}

export const WEBHOOK_REQUEST_COLUMNS = `id, webhook_id, delivery_key, input, outcome, session_id,
  turn_id, error, attempts, claimed_by, claim_expires_at, received_at, updated_at`;

export function webhookRequestFromRow(r: Row): WebhookRequestRow {
  return {
    id: str(r.id),
    webhookId: str(r.webhook_id),
    deliveryKey: strOrNull(r.delivery_key),
    input: JSON.parse(str(r.input)) as unknown,
    outcome: str(r.outcome) as WebhookRequestRow["outcome"],
    sessionId: strOrNull(r.session_id),
    turnId: strOrNull(r.turn_id),
    error: strOrNull(r.error),
    attempts: Number(r.attempts),
    claimedBy: strOrNull(r.claimed_by),
    claimExpiresAt: intOrNull(r.claim_expires_at),
    receivedAt: str(r.received_at),
    updatedAt: str(r.updated_at),
  };
}
