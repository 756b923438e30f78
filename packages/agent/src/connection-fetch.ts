// connection.fetch as agent code runs it: never with a secret. The request goes to the egress
// gateway named by the current egress context, with the session's short-lived token; the
// gateway adds the secret headers, calls the origin and streams its answer back, which this
// turns into a standard Response.

import { currentEgress } from "./egress-context.ts";
import { checkEgressPath } from "./egress-path.ts";
import {
  CREDENTIAL_HEADERS,
  decodeHeaderPairs,
  EGRESS_CONNECTION_HEADER,
  EGRESS_ERROR_HEADER,
  EGRESS_HEADERS_HEADER,
  EGRESS_METHOD_HEADER,
  EGRESS_PATH_HEADER,
  EGRESS_STATUS_HEADER,
  EGRESS_STATUS_TEXT_HEADER,
  EGRESS_TOKEN_HEADER,
  encodeHeaderPairs,
  MAX_EGRESS_BODY_BYTES,
} from "./egress-wire.ts";
import { OpenComputerError } from "./errors.ts";

/** What connection.fetch refuses or the gateway reports; `details.path` names the argument. */
export class EgressError extends OpenComputerError {}

interface Target {
  id: string;
  methods: readonly string[];
  pathPrefix: string;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export async function fetchThroughGateway(
  connection: Target,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const egress = currentEgress();
  if (!egress) {
    throw new EgressError(
      "egress_unavailable",
      `connection "${connection.id}": fetch() can only run inside a tool's run, preview or apply, where the runtime provides the egress gateway`,
      { path: "connection", connection: connection.id },
    );
  }
  const checked = checkEgressPath(path, connection.pathPrefix);
  if (!checked.ok) {
    throw new EgressError(checked.code, `connection "${connection.id}": ${checked.message}`, {
      path: "path",
      connection: connection.id,
    });
  }
  const method = (init.method ?? "GET").toUpperCase();
  if (!connection.methods.includes(method)) {
    throw new EgressError(
      "egress_method_refused",
      `connection "${connection.id}" does not allow ${method}; it declares methods ${connection.methods.join(", ")}`,
      { path: "init.method", connection: connection.id },
    );
  }
  if ((method === "GET" || method === "HEAD") && init.body != null) {
    throw new EgressError("egress_body_invalid", `a ${method} request cannot have a body`, {
      path: "init.body",
      connection: connection.id,
    });
  }
  // A Request normalises every body kind (string, bytes, URLSearchParams, FormData, stream)
  // and its content type the way fetch would.
  const request = new Request("http://connection.invalid/", {
    method: method === "GET" || method === "HEAD" ? "POST" : method,
    headers: init.headers,
    ...(init.body == null ? {} : { body: init.body, duplex: "half" }),
  } as RequestInit);
  const headers: [string, string][] = [];
  for (const [name, value] of request.headers) {
    if (CREDENTIAL_HEADERS.includes(name)) {
      throw new EgressError(
        "egress_header_refused",
        `connection "${connection.id}": the "${name}" header carries credentials, which come only from the connection's secret headers`,
        { path: `init.headers.${name}`, connection: connection.id },
      );
    }
    headers.push([name, value]);
  }
  const body = init.body == null ? undefined : await readLimited(request, connection.id);
  const signal = anySignal([init.signal, egress.signal]);
  const response = await fetch(egress.gatewayUrl, {
    method: "POST",
    headers: {
      [EGRESS_TOKEN_HEADER]: egress.token,
      [EGRESS_CONNECTION_HEADER]: connection.id,
      [EGRESS_METHOD_HEADER]: method,
      [EGRESS_PATH_HEADER]: encodeURIComponent(checked.path),
      [EGRESS_HEADERS_HEADER]: encodeHeaderPairs(headers),
      "content-type": "application/octet-stream",
    },
    ...(body ? { body } : {}),
    redirect: "manual",
    ...(signal ? { signal } : {}),
  });
  if (response.headers.get(EGRESS_ERROR_HEADER)) {
    const refusal = await readRefusal(response);
    throw new EgressError(refusal.code, `connection "${connection.id}": ${refusal.message}`, {
      path: refusal.path ?? "path",
      connection: connection.id,
      status: response.status,
    });
  }
  const status = Number(response.headers.get(EGRESS_STATUS_HEADER));
  const upstreamHeaders = decodeHeaderPairs(response.headers.get(EGRESS_HEADERS_HEADER)) ?? [];
  return new Response(NULL_BODY_STATUSES.has(status) || method === "HEAD" ? null : response.body, {
    status,
    statusText: decodeURIComponent(response.headers.get(EGRESS_STATUS_TEXT_HEADER) ?? ""),
    headers: upstreamHeaders,
  });
}

async function readLimited(request: Request, id: string): Promise<Uint8Array> {
  const reader = request.body?.getReader();
  if (!reader) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_EGRESS_BODY_BYTES) {
      await reader.cancel();
      throw new EgressError(
        "egress_body_too_large",
        `connection "${id}": the request body is larger than ${MAX_EGRESS_BODY_BYTES} bytes (5 MiB), the limit for a connection request`,
        { path: "init.body", connection: id, limit: MAX_EGRESS_BODY_BYTES },
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

async function readRefusal(
  response: Response,
): Promise<{ code: string; message: string; path?: string }> {
  try {
    const body = (await response.json()) as {
      error?: { code?: unknown; message?: unknown; path?: unknown };
    };
    const e = body.error ?? {};
    return {
      code: typeof e.code === "string" ? e.code : "egress_failed",
      message:
        typeof e.message === "string"
          ? e.message
          : `the egress gateway answered ${response.status}`,
      ...(typeof e.path === "string" ? { path: e.path } : {}),
    };
  } catch {
    return { code: "egress_failed", message: `the egress gateway answered ${response.status}` };
  }
}

function anySignal(signals: Array<AbortSignal | null | undefined>): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s != null);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
