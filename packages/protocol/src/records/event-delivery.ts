import {
  array,
  boolean,
  type Infer,
  integer,
  literal,
  nullable,
  object,
  oneOf,
  optional,
  string,
} from "../shape.ts";

export const DELIVERED_EVENT_TYPES = ["turn.completed", "turn.failed", "turn.cancelled"] as const;

/**
 * The body of one HTTPS event delivery (`schema: "opencomputer.event-delivery/v1"`): who and
 * what settled, never prompts, tool output or credentials.
 */
export const eventDeliveryShape = object({
  schema: literal("opencomputer.event-delivery/v1"),
  deliveryId: string(),
  eventId: string(),
  sequence: integer(),
  occurredAt: string(),
  projectId: string(),
  environment: string(),
  agentId: string(),
  deploymentId: string(),
  sessionId: string(),
  turnId: string(),
  type: oneOf(DELIVERED_EVENT_TYPES),
  data: object({
    status: oneOf(["completed", "failed", "cancelled"] as const),
    /** On `turn.completed`: the final message, at most 16 KB. */
    result: optional(object({ text: string(), truncated: boolean() })),
    /** On `turn.failed`: a short description. */
    error: optional(string()),
    /** On `turn.cancelled`: `interrupted` or `session_ended`. */
    reason: optional(string()),
  }),
  /** On a replay: the original delivery's id. */
  replayOf: optional(string()),
});
export type EventDelivery = Infer<typeof eventDeliveryShape>;

export const EVENT_SUBSCRIPTION_STATUSES = ["active", "paused"] as const;

/** An event subscription as the API shows it: never its signing secret. */
export const eventSubscriptionShape = object({
  id: string(),
  projectId: string(),
  environment: string(),
  /** Only this agent's sessions deliver; null for every agent in the environment. */
  agentId: nullable(string()),
  events: array(oneOf(DELIVERED_EVENT_TYPES)),
  destination: object({ type: literal("https"), url: string() }),
  /** `paused`: deliveries are recorded as `pending` and held until `resume`. */
  status: oneOf(EVENT_SUBSCRIPTION_STATUSES),
  createdAt: string(),
  updatedAt: string(),
  /** The last `rotate-secret`; the previous secret also signs for 24 hours after it. */
  secretRotatedAt: nullable(string()),
});
export type EventSubscription = Infer<typeof eventSubscriptionShape>;

export const EVENT_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** One delivery record (`GET …/event-subscriptions/<id>/deliveries/<deliveryId>`). */
export const eventDeliveryRecordShape = object({
  id: string(),
  subscriptionId: string(),
  eventId: string(),
  eventType: oneOf(DELIVERED_EVENT_TYPES),
  sequence: integer(),
  occurredAt: string(),
  projectId: string(),
  environment: string(),
  agentId: string(),
  sessionId: string(),
  turnId: string(),
  status: oneOf(EVENT_DELIVERY_STATUSES),
  /** HTTP requests made so far. */
  attempt: integer(),
  /** When the next request is due, while `pending`. */
  nextAttemptAt: nullable(string()),
  lastAttemptAt: nullable(string()),
  responseStatus: nullable(integer()),
  /** `http_<status>`, `timeout`, `transport`, `redirect`, `retry_exhausted: …`, `subscription_deleted`. */
  error: nullable(string()),
  deliveredAt: nullable(string()),
  replayOf: nullable(string()),
  createdAt: string(),
});
export type EventDeliveryRecord = Infer<typeof eventDeliveryRecordShape>;
