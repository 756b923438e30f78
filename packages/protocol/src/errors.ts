// The codes clients branch on: API error codes with their HTTP statuses, and the public
// failure codes a turn can end with. The runtime's own error text is never part of either.

/** What went wrong: a stable code, a message a person can act on, and the field at fault. */
export interface ApiErrorDetail {
  /** An ApiErrorCode or `internal`; a client should expect codes added later. */
  code: string;
  message: string;
  /** The body field, header or query parameter at fault, when there is one. */
  path?: string;
}

/** `{ error: { code, message, path? } }`: the body of every failed API call. */
export interface ApiErrorBody {
  error: ApiErrorDetail;
}

/** Each API error code and the status it is answered with. */
export const API_ERROR_STATUS = {
  invalid_input: 400,
  invalid_query: 400,
  invalid_json: 400,
  invalid_body: 400,
  invalid_agent: 400,
  /** An uploaded deployment failed the checks a build passes (names the field at fault). */
  deployment_invalid: 422,
  unauthorized: 401,
  webhook_disabled: 403,
  not_found: 404,
  agent_not_found: 404,
  method_not_allowed: 405,
  session_ended: 409,
  idempotency_conflict: 409,
  approval_decided: 409,
  approval_state: 409,
  no_open_question: 409,
  question_mismatch: 409,
  steering_limit: 409,
  /** `rollback` without `to` when the alias never named anything earlier. */
  rollback_unavailable: 409,
  body_too_large: 413,
  // Memory (docs/memory.md): the owner's document API.
  invalid_request: 400,
  invalid_cursor: 400,
  conflict: 409,
  memory_kind_changed: 409,
  precondition_failed: 412,
  memory_limit_exceeded: 413,
  precondition_required: 428,
  project_not_found: 404,
  // Event delivery (docs/event-delivery.md).
  /** A subscription's body is invalid: the destination, an event type, the environment, … */
  invalid_event_subscription: 400,
  event_subscription_not_found: 404,
} as const satisfies Record<string, number>;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

export function isApiErrorCode(code: string): code is ApiErrorCode {
  return Object.hasOwn(API_ERROR_STATUS, code);
}

/** Why a turn failed or was cancelled (`turn.failed` / `turn.cancelled`, `session.failed`). */
export const FAILURE_CODES = [
  "interrupted",
  "session_ended",
  "runtime_lost",
  "runtime_failed",
  "deployment_invalid",
  "model_unavailable",
  "model_rejected",
  "context_too_long",
  "tool_failed",
  "sandbox_timeout",
  "sandbox_failed",
  "agent_failed",
  /** The session's budget (`POST /sessions {budget}`) is spent; see docs/usage.md. */
  "budget_exceeded",
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

/** The failure codes a model step maps a provider's error to. */
export type ModelFailureCode = Extract<
  FailureCode,
  "model_unavailable" | "model_rejected" | "context_too_long"
>;
