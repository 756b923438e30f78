// What an attempt's answer means and when the next one is due, as the platform documents it:
// 2xx delivered; connection failure, timeout, 408, 425, 429 and 5xx retried (honouring
// Retry-After between 1 s and 1 h); any other status, 3xx included, a permanent failure.

/** Waits after attempts 1, 2, …: 5 s, 30 s, 2 min, 10 min, 30 min, then 1 h. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000] as const;
/** Attempts in all before a delivery is `failed` (about 5 hours). */
export const MAX_ATTEMPTS = 10;
const MIN_RETRY_AFTER_MS = 1_000;
const MAX_RETRY_AFTER_MS = 3_600_000;

/** The delay after failed attempt `attempt` (1-based). */
export function retryDelay(attempt: number): number {
  return RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]!;
}

export type AttemptResult =
  | { kind: "response"; status: number; retryAfter: string | null }
  | { kind: "timeout" }
  | { kind: "transport" };

export type Verdict =
  | { settle: "delivered" }
  | { settle: "failed"; error: string }
  | { settle: "retry"; error: string; retryAfterMs: number | null };

export function verdict(result: AttemptResult, now: number): Verdict {
  if (result.kind === "timeout") return { settle: "retry", error: "timeout", retryAfterMs: null };
  if (result.kind === "transport")
    return { settle: "retry", error: "transport", retryAfterMs: null };
  const { status } = result;
  if (status >= 200 && status < 300) return { settle: "delivered" };
  if (status >= 300 && status < 400) return { settle: "failed", error: "redirect" };
  if (status === 408 || status === 425 || status === 429 || status >= 500)
    return {
      settle: "retry",
      error: `http_${status}`,
      retryAfterMs: retryAfterMs(result.retryAfter, now),
    };
  return { settle: "failed", error: `http_${status}` };
}

/** `Retry-After` as seconds or an HTTP date, clamped to [1 s, 1 h]; null when absent or bad. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  const text = header.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(MIN_RETRY_AFTER_MS, ms));
}
