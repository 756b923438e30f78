import { OpenComputerError } from "@opencomputer/agent";
import type { ModelFailureCode } from "@opencomputer/protocol";

/** Public failure codes a model step can end a turn with (the protocol's). */
export type { ModelFailureCode };

/**
 * A model step that failed, already mapped to a public failure code. `message` is safe to show
 * to clients: it never carries provider credentials or raw response bodies.
 */
export class ModelError extends OpenComputerError {
  constructor(
    code: ModelFailureCode,
    message: string,
    readonly model: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(code, message, { model }, options);
  }
}

interface HttpLikeError {
  statusCode?: number;
  status?: number;
  message?: string;
}

/** Maps whatever a provider threw to a public code: 5xx/429 unavailable, other 4xx rejected. */
export function toModelError(error: unknown, model: string): ModelError {
  if (error instanceof ModelError) return error;
  const e = (error ?? {}) as HttpLikeError;
  const status = e.statusCode ?? e.status;
  const text = typeof e.message === "string" ? e.message : String(error);
  if (
    /context|too long|too many tokens|maximum.*tokens/i.test(text) &&
    status !== undefined &&
    status < 500
  ) {
    return new ModelError(
      "context_too_long",
      `The conversation is too long for ${model}`,
      model,
      status,
      { cause: error },
    );
  }
  if (status !== undefined && status >= 400 && status < 500 && status !== 429 && status !== 408) {
    return new ModelError(
      "model_rejected",
      `${model} rejected the request (HTTP ${status}): ${text}`,
      model,
      status,
      {
        cause: error,
      },
    );
  }
  const what = status === undefined ? text : `HTTP ${status}: ${text}`;
  return new ModelError("model_unavailable", `${model} is unavailable (${what})`, model, status, {
    cause: error,
  });
}
