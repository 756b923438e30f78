import { APICallError } from "@ai-sdk/provider";
import { ModelError, type ModelFailureCode, toModelError } from "@opencomputer/runtime";

/**
 * Provider messages that mean "the prompt does not fit the model's context window". Matched on
 * the message and the raw body because OpenAI puts its code in the body only.
 */
const CONTEXT_OVERFLOW = [
  /context_length_exceeded/i, // OpenAI error code
  /maximum context length/i, // OpenAI, vLLM: "This model's maximum context length is ..."
  /prompt is too long/i, // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
  /exceeds? (the )?(available )?context (limit|size|window|length)/i, // Anthropic max_tokens, llama.cpp
  /request_too_large/i, // Anthropic 413: the request is larger than the API accepts
];

/** Things that look like credentials even when a provider echoes only part of them. */
const KEY_LIKE = [/\bsk-[A-Za-z0-9_*.-]{4,}/g, /\bBearer\s+[A-Za-z0-9_*.~+/=-]+/gi];

export function statusOf(error: unknown): number | undefined {
  if (APICallError.isInstance(error)) return error.statusCode;
  const e = error as { statusCode?: unknown; status?: unknown } | null;
  const status = e?.statusCode ?? e?.status;
  return typeof status === "number" ? status : undefined;
}

/** 408/409/429/5xx and dropped connections are worth another try; the rest will fail the same. */
export function isRetryable(error: unknown): boolean {
  if (!APICallError.isInstance(error)) return false;
  const status = error.statusCode;
  if (status === undefined) return error.isRetryable; // network error before any response
  // OpenAI answers 429 for an exhausted quota too; waiting does not refill it.
  if (status === 429) return !/insufficient_quota/.test(error.responseBody ?? "");
  return status === 408 || status === 409 || status >= 500;
}

/** The wait the server asked for, in ms: `retry-after-ms` (OpenAI) or `retry-after` (s or date). */
export function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const headers = error.responseHeaders ?? {};
  const ms = Number.parseFloat(headers["retry-after-ms"] ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers["retry-after"];
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function isContextOverflow(error: unknown): boolean {
  const status = statusOf(error);
  if (status !== undefined && status >= 500) return false;
  const body = APICallError.isInstance(error) ? (error.responseBody ?? "") : "";
  const text = `${messageOf(error)}\n${body}`;
  return CONTEXT_OVERFLOW.some((pattern) => pattern.test(text));
}

/** Removes the given secrets and anything key-shaped, so messages are safe to show and log. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join("[redacted]");
  for (const pattern of KEY_LIKE) out = out.replace(pattern, "[redacted]");
  return out;
}

/**
 * Maps a provider failure to a public ModelError. The original error is not kept as `cause`: its
 * response body and headers may echo credentials; a redacted stand-in is kept instead.
 */
export function toProviderError(
  error: unknown,
  modelId: string,
  secrets: readonly string[],
): ModelError {
  const status = statusOf(error);
  const safe = Object.assign(new Error(redact(messageOf(error), secrets)), { statusCode: status });
  if (error instanceof Error) safe.name = error.name;
  if (isContextOverflow(error)) {
    return new ModelError(
      "context_too_long",
      `The conversation is too long for ${modelId}`,
      modelId,
      status,
      { cause: safe },
    );
  }
  const mapped = toModelError(error instanceof ModelError ? error : safe, modelId);
  const message = redact(mapped.message, secrets);
  if (message === mapped.message) return mapped;
  return new ModelError(mapped.code as ModelFailureCode, message, modelId, status, {
    cause: safe,
  });
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : String(error);
}
