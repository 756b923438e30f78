// One operation against an HTTP memory provider (docs/memory.md, "HTTP memory"): a JSON POST to
// the declared path of the declared connection, sent through the egress gateway with a grant of
// this turn, so the gateway adds the connection's secret headers and records egress events; the
// engine never holds the secret. Each operation has one deadline covering every attempt; answers
// are read only up to the size limit; every failure is a MemoryProviderError with a stable code.

import type { JsonValue } from "@opencomputer/agent";
import { OpenComputerError } from "@opencomputer/agent";
import type { MemoryDeclaration } from "@opencomputer/agent/internal";
import { fetchThroughGateway, runWithEgress, utf8Bytes } from "@opencomputer/agent/internal";
import { type EgressLease, leaseEgress } from "./egress-for.ts";
import type { TurnScope } from "./turn-scope.ts";

export type HttpMemoryDeclaration = MemoryDeclaration & {
  provider: Extract<MemoryDeclaration["provider"], { kind: "http" }>;
};

/** The bounds of the provider protocol. */
export const HTTP_MEMORY_LIMITS = {
  requestBytes: 64 * 1024,
  responseBytes: 64 * 1024,
  sources: 100,
  /** Source ids, cursors and other provider-chosen strings, in UTF-8 bytes. */
  idBytes: 1024,
  /** What of a provider's error message is kept. */
  messageChars: 500,
} as const;

/** Time limits of provider operations (createRuntime's `httpMemory` option). */
export interface HttpMemorySettings {
  /** One operation, all attempts included (default 10 000 ms). */
  deadlineMs: number;
  /** The waits before the second and third attempts of a retryable operation. */
  retryDelaysMs: readonly number[];
}

export const DEFAULT_HTTP_MEMORY: HttpMemorySettings = {
  deadlineMs: 10_000,
  retryDelaysMs: [250, 1000],
};

/**
 * A provider operation that did not produce a usable answer. Codes:
 * `memory_provider_unreachable` (the gateway or the origin could not be reached),
 * `memory_provider_egress_refused` (the gateway refused before sending: `details.egressCode`,
 * e.g. `egress_secret_missing`), `memory_provider_timeout`,
 * `memory_provider_too_large` (request or response over 64 KiB), `memory_provider_invalid`
 * (not JSON, or not the protocol's shape; `details.path` names the field),
 * `memory_provider_conflict` (HTTP 409), `memory_provider_error` (any other non-2xx answer),
 * `memory_egress_unavailable` (this runtime has no egress gateway).
 */
export class MemoryProviderError extends OpenComputerError {
  /** A transport failure or timeout: for a write, whether it happened is unknown. */
  get uncertain(): boolean {
    return this.code === "memory_provider_unreachable" || this.code === "memory_provider_timeout";
  }
}

export interface ProviderAnswer {
  status: number;
  body: JsonValue;
}

/** Gateway failures after which the request may or may not have reached the origin. */
const TRANSPORT_EGRESS_CODES = new Set(["egress_upstream_failed", "egress_cancelled"]);

const RETRYABLE_STATUS = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * POSTs `body` (with `version` and `deadlineAt` added) and returns the 2xx answer's JSON.
 * `retry` allows the two further attempts (recall and read tools, idempotent writes), on
 * transport failures and 408/429/5xx, with the same body.
 */
export async function callProvider(
  scope: TurnScope,
  declaration: HttpMemoryDeclaration,
  body: Record<string, JsonValue>,
  retry: boolean,
): Promise<ProviderAnswer> {
  const settings = scope.ctx.httpMemory ?? DEFAULT_HTTP_MEMORY;
  const deadline = Date.now() + settings.deadlineMs;
  const payload = JSON.stringify({
    version: 1,
    ...body,
    deadlineAt: new Date(deadline).toISOString(),
  });
  const resource = declaration.id;
  if (utf8Bytes(payload) > HTTP_MEMORY_LIMITS.requestBytes) {
    throw new MemoryProviderError(
      "memory_provider_too_large",
      `memory ${resource}: the request is ${utf8Bytes(payload)} bytes; the provider protocol allows ${HTTP_MEMORY_LIMITS.requestBytes}`,
      { path: "request", resource },
    );
  }
  const attempts = retry ? 1 + settings.retryDelaysMs.length : 1;
  for (let attempt = 1; ; attempt++) {
    let wait: number | undefined;
    try {
      const answer = await attempt1(scope, declaration, payload, deadline);
      if (answer.status >= 200 && answer.status < 300) return answer;
      if (attempt < attempts && RETRYABLE_STATUS(answer.status)) {
        wait = retryAfter(answer.retryAfter, settings.retryDelaysMs[attempt - 1]!, deadline);
      }
      if (wait === undefined) throw refusal(resource, answer);
    } catch (error) {
      // The turn was interrupted or its runtime is closing: whoever aborted it settles it.
      if (scope.signal.aborted) throw error;
      if (!(error instanceof MemoryProviderError) || !error.uncertain || attempt >= attempts) {
        throw error;
      }
      wait = settings.retryDelaysMs[attempt - 1]!;
    }
    if (Date.now() + wait >= deadline) {
      throw new MemoryProviderError(
        "memory_provider_timeout",
        `memory ${resource}: the provider did not answer within ${settings.deadlineMs} ms (${attempt} attempts)`,
        { resource },
      );
    }
    await sleep(wait, scope.signal);
  }
}

interface RawAnswer extends ProviderAnswer {
  retryAfter: string | null;
}

async function attempt1(
  scope: TurnScope,
  declaration: HttpMemoryDeclaration,
  payload: string,
  deadline: number,
): Promise<RawAnswer> {
  const resource = declaration.id;
  const { connection, path } = declaration.provider;
  const lease = await providerEgress(scope, resource);
  const timeout = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
  const signal = AbortSignal.any([timeout, scope.signal]);
  try {
    const response = await runWithEgress({ ...lease.egress!, signal }, () =>
      fetchThroughGateway(connection, path, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: payload,
        signal,
      }),
    );
    const text = await readBounded(response, resource);
    const status = response.status;
    let body: JsonValue;
    try {
      body = text === "" ? null : (JSON.parse(text) as JsonValue);
    } catch {
      if (status >= 200 && status < 300) {
        throw new MemoryProviderError(
          "memory_provider_invalid",
          `memory ${resource}: the provider answered HTTP ${status} with a body that is not JSON`,
          { path: "response", resource },
        );
      }
      body = null;
    }
    return { status, body, retryAfter: response.headers.get("retry-after") };
  } catch (error) {
    if (error instanceof MemoryProviderError) throw error;
    if (timeout.aborted) {
      throw new MemoryProviderError(
        "memory_provider_timeout",
        `memory ${resource}: the provider did not answer before the operation's deadline`,
        { resource },
      );
    }
    const egressCode = error instanceof OpenComputerError ? error.code : undefined;
    const why = error instanceof Error ? error.message : String(error);
    if (egressCode && !TRANSPORT_EGRESS_CODES.has(egressCode)) {
      // The gateway refused before calling the origin (a secret not set, a connection the
      // deployment lacks, a plain-http origin outside dev mode): nothing was sent.
      throw new MemoryProviderError(
        "memory_provider_egress_refused",
        `memory ${resource}: the egress gateway refused the request: ${why}`,
        { resource, egressCode },
      );
    }
    throw new MemoryProviderError(
      "memory_provider_unreachable",
      `memory ${resource}: the provider could not be reached: ${why}`,
      { resource, egressCode: egressCode ?? "egress_upstream_failed" },
    );
  } finally {
    await lease.end();
  }
}

/** A grant for one attempt; the gateway adds the connection's secret headers with it. */
async function providerEgress(scope: TurnScope, resource: string): Promise<EgressLease> {
  if (!scope.ctx.egress) {
    throw new MemoryProviderError(
      "memory_egress_unavailable",
      `memory ${resource} is kept by an HTTP provider behind a connection, but this runtime has no egress gateway to add its secret headers`,
      { resource },
    );
  }
  const lease = await leaseEgress(scope.ctx, {
    sessionId: scope.sessionId,
    agentId: scope.agentId,
    deploymentId: scope.deploymentId,
    turnId: scope.turn.id,
  });
  if (!lease.egress) {
    throw new MemoryProviderError(
      "memory_egress_unavailable",
      `memory ${resource}: the egress gateway gave no grant for this session`,
      { resource },
    );
  }
  return lease;
}

/** The body as text, refusing (and cancelling) it once it passes the response limit. */
async function readBounded(response: Response, resource: string): Promise<string> {
  const limit = HTTP_MEMORY_LIMITS.responseBytes;
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(resource, `${declared}`);
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(resource, `more than ${limit}`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function tooLarge(resource: string, bytes: string) {
  return new MemoryProviderError(
    "memory_provider_too_large",
    `memory ${resource}: the provider's answer is ${bytes} bytes; the protocol allows ${HTTP_MEMORY_LIMITS.responseBytes}`,
    { path: "response", resource },
  );
}

/** A non-2xx answer as an error, with the provider's own code and message when it sent them. */
function refusal(resource: string, answer: ProviderAnswer): MemoryProviderError {
  const envelope = answer.body as { error?: { code?: unknown; message?: unknown } } | null;
  const error = typeof envelope === "object" && envelope !== null ? envelope.error : undefined;
  const providerCode = typeof error?.code === "string" ? error.code.slice(0, 100) : undefined;
  const message =
    typeof error?.message === "string"
      ? error.message.slice(0, HTTP_MEMORY_LIMITS.messageChars)
      : `HTTP ${answer.status}`;
  return new MemoryProviderError(
    answer.status === 409 ? "memory_provider_conflict" : "memory_provider_error",
    `memory ${resource}: the provider refused (HTTP ${answer.status}${providerCode ? `, ${providerCode}` : ""}): ${message}`,
    { resource, status: answer.status, ...(providerCode ? { providerCode } : {}) },
  );
}

/** A valid Retry-After (seconds or a date) when it fits the deadline, else the default wait. */
function retryAfter(header: string | null, fallback: number, deadline: number): number {
  if (header === null) return fallback;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  if (!Number.isFinite(ms) || ms < 0 || Date.now() + ms >= deadline) return fallback;
  return ms;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
