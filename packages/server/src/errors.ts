import { OpenComputerError } from "@opencomputer/agent";
import { API_ERROR_STATUS, type ApiErrorBody, isApiErrorCode } from "@opencomputer/protocol";

/** An error raised by the HTTP layer itself (bad query, body too large, ...). */
export class HttpError extends OpenComputerError {}

// Statuses are chosen by the stable error `code` (the protocol's table), never by class, so
// errors thrown by another copy of the runtime (or a future store) map the same way.

/** The body of every failed call: `{ error: { code, message, path? } }`. */
export type ErrorBody = ApiErrorBody;

/** Builds the JSON error response for `error`; `null` means "unexpected" (a 500). */
export function describeError(error: unknown): { status: number; body: ErrorBody } | null {
  if (!(error instanceof OpenComputerError)) return null;
  if (!isApiErrorCode(error.code)) return null;
  const status = API_ERROR_STATUS[error.code];
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
