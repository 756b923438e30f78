import { OpenComputerError } from "@opencomputer/agent";

/** An error raised by the HTTP layer itself (bad query, body too large, ...). */
export class HttpError extends OpenComputerError {}

// Statuses are chosen by the stable error `code`, never by class, so errors thrown by another
// copy of the runtime (or a future store) map the same way.
const STATUS_BY_CODE: Record<string, number> = {
  invalid_input: 400,
  invalid_query: 400,
  invalid_json: 400,
  invalid_body: 400,
  invalid_agent: 400,
  unauthorized: 401,
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
  body_too_large: 413,
};

export interface ErrorBody {
  error: { code: string; message: string; path?: string };
}

/** Builds the JSON error response for `error`; `null` means "unexpected" (a 500). */
export function describeError(error: unknown): { status: number; body: ErrorBody } | null {
  if (!(error instanceof OpenComputerError)) return null;
  const status = STATUS_BY_CODE[error.code];
  if (status === undefined) return null;
  const body: ErrorBody = { error: { code: error.code, message: error.message } };
  if (typeof error.details.path === "string") body.error.path = error.details.path;
  return { status, body };
}

/** The body sent for anything unexpected: the internal text could leak secrets or paths. */
export const INTERNAL_ERROR: ErrorBody = {
  error: { code: "internal", message: "Internal server error; retrying is safe" },
};

export const invalidQuery = (path: string, message: string): HttpError =>
  new HttpError("invalid_query", `${path}: ${message}`, { path });

export const invalidInput = (path: string, message: string): HttpError =>
  new HttpError("invalid_input", `${path}: ${message}`, { path });
