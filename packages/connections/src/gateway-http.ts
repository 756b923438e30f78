// The gateway's side of its HTTP exchange with agent code: reading the request body within the
// limit, turning any failure into a typed refusal, and writing the relayed answer or the refusal.

import type { IncomingMessage, ServerResponse } from "node:http";
import { egressWire as wire } from "@opencomputer/agent/internal";
import { redactText } from "./redact.ts";
import { EgressRefusal } from "./refusal.ts";
import { DROPPED_REQUEST_HEADERS } from "./secret-headers.ts";

const DROPPED_RESPONSE_HEADERS = new Set([
  ...DROPPED_REQUEST_HEADERS,
  // fetch already decoded the body: passing the encoding on would make the client decode twice.
  "content-encoding",
  "set-cookie",
  "set-cookie2",
]);

export function decodePath(value: string | string[] | undefined): string {
  if (typeof value !== "string") return "";
  try {
    return decodeURIComponent(value);
  } catch {
    return "";
  }
}

export async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"] ?? 0);
  const tooLarge = () =>
    new EgressRefusal(
      413,
      "egress_body_too_large",
      `the request body is larger than ${wire.MAX_EGRESS_BODY_BYTES} bytes (5 MiB), the limit for a connection request`,
      "init.body",
    );
  if (declared > wire.MAX_EGRESS_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > wire.MAX_EGRESS_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return size === 0 ? undefined : Buffer.concat(chunks);
}

/** Any failure as a refusal; messages are redacted, in case an error quoted a header value. */
export function asRefusal(
  error: unknown,
  signal: AbortSignal,
  forms: readonly Buffer[],
): EgressRefusal {
  let refusal: EgressRefusal;
  if (error instanceof EgressRefusal) refusal = error;
  else if (signal.aborted && signal.reason instanceof EgressRefusal) refusal = signal.reason;
  else if (signal.aborted) {
    refusal = new EgressRefusal(499, "egress_cancelled", "the request was cancelled");
  } else {
    refusal = new EgressRefusal(
      502,
      "egress_failed",
      `the request failed: ${(error as Error)?.message ?? String(error)}`,
    );
  }
  const message = redactText(refusal.message, forms);
  return message === refusal.message
    ? refusal
    : new EgressRefusal(refusal.status, refusal.code, message, refusal.path);
}

/** The origin's status and headers, redacted, in the wire's encoding; the body follows. */
export function writeRelayHead(res: ServerResponse, upstream: Response, forms: readonly Buffer[]) {
  const pairs: [string, string][] = [];
  for (const [name, value] of upstream.headers) {
    if (!DROPPED_RESPONSE_HEADERS.has(name)) pairs.push([name, redactText(value, forms)]);
  }
  res.writeHead(200, {
    [wire.EGRESS_STATUS_HEADER]: String(upstream.status),
    [wire.EGRESS_STATUS_TEXT_HEADER]: encodeURIComponent(redactText(upstream.statusText, forms)),
    [wire.EGRESS_HEADERS_HEADER]: wire.encodeHeaderPairs(pairs),
    "content-type": "application/octet-stream",
  });
}

export function writeRefusal(res: ServerResponse, refusal: EgressRefusal): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(refusal.status, {
    [wire.EGRESS_ERROR_HEADER]: "1",
    "content-type": "application/json",
  });
  res.end(
    JSON.stringify({
      error: {
        code: refusal.code,
        message: refusal.message,
        ...(refusal.path ? { path: refusal.path } : {}),
      },
    }),
  );
}
