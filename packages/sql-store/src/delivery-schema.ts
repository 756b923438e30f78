// The event-delivery tables, with the column types of each database. The trigger that fills
// `event_outbox` is written per database (store-sqlite, store-postgres): it runs inside the
// transaction that inserts the event, so an event and its outbox row commit or vanish together.

export interface DeliveryDdlTypes {
  text: string;
  int: string;
  json: string;
  /** An auto-numbered primary key column type. */
  serial: string;
}

/** The event types copied into `event_outbox` for delivery. */
export const DELIVERED_TYPES: readonly string[] = [
  "turn.completed",
  "turn.failed",
  "turn.cancelled",
];

/** DELIVERED_TYPES as an SQL list, for `type IN ...`. */
export const DELIVERED_TYPES_SQL = `(${DELIVERED_TYPES.map((t) => `'${t}'`).join(", ")})`;

export function deliveryTablesDdl(t: DeliveryDdlTypes): string {
  return `
CREATE TABLE event_subscriptions (
  id ${t.text} PRIMARY KEY,
  project_id ${t.text} NOT NULL,
  environment ${t.text} NOT NULL,
  agent_id ${t.text},
  events ${t.text} NOT NULL,
  url ${t.text} NOT NULL,
  status ${t.text} NOT NULL,
  secret ${t.text} NOT NULL,
  previous_secret ${t.text},
  previous_secret_until ${t.int},
  created_at ${t.text} NOT NULL,
  updated_at ${t.text} NOT NULL,
  secret_rotated_at ${t.text}
);
CREATE INDEX event_subscriptions_by_project ON event_subscriptions (project_id, created_at, id);
CREATE TABLE event_outbox (
  rid ${t.serial},
  event_id ${t.text} NOT NULL,
  session_id ${t.text} NOT NULL,
  seq ${t.int} NOT NULL,
  type ${t.text} NOT NULL,
  turn_id ${t.text},
  occurred_at ${t.text} NOT NULL,
  data ${t.json} NOT NULL
);
CREATE TABLE event_deliveries (
  id ${t.text} PRIMARY KEY,
  subscription_id ${t.text} NOT NULL,
  event_id ${t.text} NOT NULL,
  event_type ${t.text} NOT NULL,
  seq ${t.int} NOT NULL,
  occurred_at ${t.text} NOT NULL,
  project_id ${t.text} NOT NULL,
  environment ${t.text} NOT NULL,
  agent_id ${t.text} NOT NULL,
  deployment_id ${t.text} NOT NULL,
  session_id ${t.text} NOT NULL,
  turn_id ${t.text} NOT NULL,
  data ${t.text} NOT NULL,
  status ${t.text} NOT NULL,
  attempt ${t.int} NOT NULL,
  next_attempt_ms ${t.int},
  last_attempt_at ${t.text},
  response_status ${t.int},
  error ${t.text},
  delivered_at ${t.text},
  replay_of ${t.text},
  created_at ${t.text} NOT NULL,
  claimed_by ${t.text},
  claim_expires_at ${t.int}
);
CREATE UNIQUE INDEX event_deliveries_once ON event_deliveries (subscription_id, event_id)
  WHERE replay_of IS NULL;
CREATE INDEX event_deliveries_by_subscription ON event_deliveries (subscription_id, id);
CREATE INDEX event_deliveries_due ON event_deliveries (next_attempt_ms) WHERE status = 'pending';
`;
}
