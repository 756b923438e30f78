import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { ModelError } from "@opencomputer/runtime";
import { isRetryable, retryAfterMs, toProviderError } from "./errors.ts";

export interface RetryOptions {
  /** Further attempts after the first one. */
  maxRetries?: number;
  /** The backoff ceiling of the first retry; it doubles per retry up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** No retry starts once this much time passed since the first attempt started. */
  budgetMs?: number;
  /** The public id errors name, e.g. `anthropic/claude-sonnet-4-5`. */
  modelId?: string;
  /** Strings (API keys) that must never reach an error message. */
  secrets?: readonly string[];
  /** The jitter source, 0 ≤ x < 1; tests replace it. */
  random?: () => number;
}

export const DEFAULT_RETRY = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  budgetMs: 60_000,
};

/**
 * Wraps a provider model so transient failures (429, 5xx, dropped connections) are retried with
 * exponential backoff and full jitter, and every failure that escapes is a public ModelError
 * without credentials. An aborted call rejects at once with the abort's own error.
 */
export function withRetries(model: LanguageModelV3, options: RetryOptions = {}): LanguageModelV3 {
  const settings = { ...DEFAULT_RETRY, ...definedOnly(options) };
  const modelId = options.modelId ?? `${model.provider}/${model.modelId}`;
  const secrets = options.secrets ?? [];
  const random = options.random ?? Math.random;

  async function attempt<T>(call: () => PromiseLike<T>, signal?: AbortSignal): Promise<T> {
    const started = Date.now();
    for (let retry = 0; ; retry++) {
      try {
        return await call();
      } catch (error) {
        if (signal?.aborted) throw error;
        const remaining = settings.budgetMs - (Date.now() - started);
        const wait =
          retry < settings.maxRetries && isRetryable(error) ? delayFor(error, retry) : Infinity;
        if (wait > remaining) throw toProviderError(error, modelId, secrets);
        await sleep(wait, signal);
      }
    }
  }

  function delayFor(error: unknown, retry: number): number {
    const asked = retryAfterMs(error);
    if (asked !== undefined) return asked;
    const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** retry);
    return random() * ceiling;
  }

  return {
    specificationVersion: "v3",
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate(options: LanguageModelV3CallOptions) {
      return attempt(() => model.doGenerate(options), options.abortSignal);
    },
    async doStream(options: LanguageModelV3CallOptions) {
      const result = await attempt(() => model.doStream(options), options.abortSignal);
      const stream = guardStream(result.stream, modelId, secrets, options.abortSignal);
      return { ...result, stream };
    },
  };
}

/**
 * Passes the stream through, mapping failures to ModelErrors. A stream that stops without its
 * `finish` part errors instead of looking like a short answer. Parts already sent can't be taken
 * back, so a stream that failed half-way is not retried here.
 */
function guardStream(
  source: ReadableStream<LanguageModelV3StreamPart>,
  modelId: string,
  secrets: readonly string[],
  signal: AbortSignal | undefined,
): ReadableStream<LanguageModelV3StreamPart> {
  const reader = source.getReader();
  let finished = false;
  return new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) {
          if (value.type === "finish") finished = true;
          controller.enqueue(
            value.type === "error"
              ? { type: "error", error: toProviderError(value.error, modelId, secrets) }
              : value,
          );
        } else if (finished) {
          controller.close();
        } else {
          const message = `${modelId} ended its response before finishing`;
          controller.error(new ModelError("model_unavailable", message, modelId));
        }
      } catch (error) {
        controller.error(signal?.aborted ? error : toProviderError(error, modelId, secrets));
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Waits, or rejects with the abort reason as soon as the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** `{maxRetries: undefined}` must not erase a default. */
function definedOnly(options: RetryOptions) {
  const out: Partial<typeof DEFAULT_RETRY> = {};
  for (const key of Object.keys(DEFAULT_RETRY) as (keyof typeof DEFAULT_RETRY)[]) {
    const value = options[key];
    if (typeof value === "number") out[key] = value;
  }
  return out;
}
