// Rows of the event-delivery tables → the port's records, once for both SQL stores. An event
// subscription's `events` column is the list as `,a,b,` text so one LIKE matches a type in
// SQLite and PostgreSQL alike; node-postgres returns int8 as strings, hence `Number`.
import type { DeliveryRow, EventSubscriptionRow, OutboxEvent } from "@opencomputer/runtime";
import type { Row } from "./trigger-rows.ts";

const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const intOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const json = (v: unknown): DeliveryRow["data"] =>
  (typeof v === "string" ? JSON.parse(v) : v) as DeliveryRow["data"];

export const eventList = (events: readonly string[]): string => `,${events.join(",")},`;

export const SUBSCRIPTION_COLUMNS = `id, project_id, environment, agent_id, events, url, status,
  secret, previous_secret, previous_secret_until, created_at, updated_at, secret_rotated_at`;

export function subscriptionFromRow(r: Row): EventSubscriptionRow {
  return {
    id: str(r.id),
    projectId: str(r.project_id),
    environment: str(r.environment),
    agentId: strOrNull(r.agent_id),
    events: str(r.events)
      .split(",")
      .filter((e) => e !== "") as EventSubscriptionRow["events"],
    destination: { type: "https", url: str(r.url) },
    status: str(r.status) as EventSubscriptionRow["status"],
    secret: str(r.secret),
    previousSecret: strOrNull(r.previous_secret),
    previousSecretUntil: intOrNull(r.previous_secret_until),
    createdAt: str(r.created_at),
    updatedAt: str(r.updated_at),
    secretRotatedAt: strOrNull(r.secret_rotated_at),
  };
}

export const OUTBOX_COLUMNS = `o.rid, o.event_id, o.session_id, o.seq, o.type, o.turn_id,
  o.occurred_at, o.data, s.project_id, s.environment, s.agent_id, s.deployment_id`;

export function outboxFromRow(r: Row): OutboxEvent {
  return {
    rid: Number(r.rid),
    eventId: str(r.event_id),
    sessionId: str(r.session_id),
    sequence: Number(r.seq),
    type: str(r.type) as OutboxEvent["type"],
    turnId: strOrNull(r.turn_id),
    occurredAt: str(r.occurred_at),
    data: json(r.data),
    projectId: strOrNull(r.project_id),
    environment: strOrNull(r.environment),
    agentId: strOrNull(r.agent_id),
    deploymentId: strOrNull(r.deployment_id),
  };
}

export const DELIVERY_COLUMNS = `id, subscription_id, event_id, event_type, seq, occurred_at,
  project_id, environment, agent_id, deployment_id, session_id, turn_id, data, status, attempt,
  next_attempt_ms, last_attempt_at, response_status, error, delivered_at, replay_of, created_at,
  claimed_by, claim_expires_at`;

export function deliveryFromRow(r: Row): DeliveryRow {
  const next = intOrNull(r.next_attempt_ms);
  const status = str(r.status) as DeliveryRow["status"];
  return {
    id: str(r.id),
    subscriptionId: str(r.subscription_id),
    eventId: str(r.event_id),
    eventType: str(r.event_type) as DeliveryRow["eventType"],
    sequence: Number(r.seq),
    occurredAt: str(r.occurred_at),
    projectId: str(r.project_id),
    environment: str(r.environment),
    agentId: str(r.agent_id),
    deploymentId: str(r.deployment_id),
    sessionId: str(r.session_id),
    turnId: str(r.turn_id),
    data: json(r.data),
    status,
    attempt: Number(r.attempt),
    nextAttemptAt: status === "pending" && next !== null ? new Date(next).toISOString() : null,
    nextAttemptMs: next,
    lastAttemptAt: strOrNull(r.last_attempt_at),
    responseStatus: intOrNull(r.response_status),
    error: strOrNull(r.error),
    deliveredAt: strOrNull(r.delivered_at),
    replayOf: strOrNull(r.replay_of),
    createdAt: str(r.created_at),
    claimedBy: strOrNull(r.claimed_by),
    claimExpiresAt: intOrNull(r.claim_expires_at),
  };
}
