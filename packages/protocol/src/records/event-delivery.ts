import {
  boolean,
  type Infer,
  integer,
  literal,
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
