// One request through the gateway, from agent code's POST to the relayed answer: the token
// (signed, live, for this session's URL), the connection the deployment declared, method, path,
// origin scheme and body checks, the secret headers, the origin call and the redacted relay,
// with egress.request / egress.response / egress.failed reported on the way.

import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { JsonObject } from "@opencomputer/agent";
import {
  type ConnectionDeclaration,
  checkEgressPath,
  egressWire as wire,
} from "@opencomputer/agent/internal";
import type { EgressEvent, EgressGatewayOptions } from "./gateway.ts";
import { asRefusal, decodePath, readBody, writeRefusal, writeRelayHead } from "./gateway-http.ts";
import type { LiveTokens } from "./live-tokens.ts";
import { echoForms, redactingStream } from "./redact.ts";
import { EgressRefusal } from "./refusal.ts";
import { upstreamHeaders } from "./secret-headers.ts";
import type { EgressClaims, TokenSigner } from "./token.ts";
import { callUpstream } from "./upstream.ts";

/** What every request of one gateway shares. */
export interface GatewayContext {
  options: EgressGatewayOptions;
  signer: TokenSigner;
  live: LiveTokens;
  now: () => number;
  maxRedirects: number;
  /** Records an event in the session's log; never throws. */
  emit(sessionId: string, event: EgressEvent): Promise<void>;
}

interface Target {
  connectionId: string;
  method: string;
  path: string;
}

/** What one request learns as it is checked; the failure report uses whatever is known. */
interface RequestState {
  claims?: EgressClaims;
  target?: Target;
  /** Echo forms of the secrets sent: redacted from the answer and from refusals. */
  forms: Buffer[];
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export async function handleEgress(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const controller = new AbortController();
  // The agent's signal (or a crashed worker) closes its connection: stop the origin call too.
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  const state: RequestState = { forms: [] };
  let untrack = () => {};
  const started = performance.now();
  try {
    const claims = authenticate(ctx, req);
    state.claims = claims;
    untrack = ctx.live.track(claims.id ?? "", controller);
    const request = await prepare(ctx, req, claims, state);
    // Revoked (its call ended) or abandoned while being checked: the origin is not called.
    controller.signal.throwIfAborted();
    await ctx.emit(claims.sessionId, event(claims, "egress.request", { ...state.target! }));
    // Before the origin is called: a process killed during the call still has it on record.
    await ctx.options.observe?.({
      claims,
      ...state.target!,
      idempotencyKey: idempotencyKeyOf(request.connection, request.headers),
    });
    const upstream = await callUpstream({
      ...request,
      signal: controller.signal,
      maxRedirects: ctx.maxRedirects,
    });
    writeRelayHead(res, upstream, state.forms);
    if (upstream.body) {
      const body = Readable.fromWeb(upstream.body as import("node:stream/web").ReadableStream);
      if (state.forms.length > 0) await pipeline(body, redactingStream(state.forms), res);
      else await pipeline(body, res);
    } else res.end();
    await ctx.emit(
      claims.sessionId,
      event(claims, "egress.response", {
        ...state.target!,
        status: upstream.status,
        durationMs: Math.round(performance.now() - started),
      }),
    );
  } catch (error) {
    const refusal = asRefusal(error, controller.signal, state.forms);
    await reportFailure(ctx, req, state, refusal);
    writeRefusal(res, refusal);
  } finally {
    untrack();
  }
}

/** Every check before the origin is called; the request to send, with its secret headers. */
async function prepare(
  ctx: GatewayContext,
  req: IncomingMessage,
  claims: EgressClaims,
  state: RequestState,
) {
  const connection = await findConnection(ctx, claims, req);
  const method = String(req.headers[wire.EGRESS_METHOD_HEADER] ?? "").toUpperCase();
  const rawPath = decodePath(req.headers[wire.EGRESS_PATH_HEADER]);
  state.target = { connectionId: connection.id, method, path: rawPath.split("?")[0] ?? rawPath };
  if (!(connection.methods as readonly string[]).includes(method)) {
    throw new EgressRefusal(
      405,
      "egress_method_refused",
      `${method || "(none)"} is not allowed; the connection declares ${connection.methods.join(", ")}`,
      "init.method",
    );
  }
  const checked = checkEgressPath(rawPath, connection.pathPrefix);
  if (!checked.ok) throw new EgressRefusal(400, checked.code, checked.message, "path");
  state.target.path = checked.path.split("?")[0] ?? checked.path;
  checkOrigin(ctx, connection.origin);
  const { headers, values } = await upstreamHeaders(
    req.headers[wire.EGRESS_HEADERS_HEADER] as string | undefined,
    connection,
    claims.environment,
    ctx.options.secrets,
  );
  state.forms = echoForms(values);
  const body = await readBody(req);
  if (body && (method === "GET" || method === "HEAD")) {
    throw new EgressRefusal(
      400,
      "egress_body_invalid",
      `a ${method} request cannot have a body`,
      "init.body",
    );
  }
  return { connection, method, path: checked.path, headers, body };
}

/** A refused or failed request of a known token is the session's business: it is logged. */
async function reportFailure(
  ctx: GatewayContext,
  req: IncomingMessage,
  state: RequestState,
  refusal: EgressRefusal,
) {
  const { claims, target } = state;
  if (!claims) return;
  // Refused before the connection was known (e.g. undeclared): named as agent code asked.
  const data = target ?? {
    connectionId: String(req.headers[wire.EGRESS_CONNECTION_HEADER] ?? ""),
    method: String(req.headers[wire.EGRESS_METHOD_HEADER] ?? ""),
    path: "",
  };
  await ctx.emit(
    claims.sessionId,
    event(claims, "egress.failed", { ...data, message: refusal.message }),
  );
}

function authenticate(ctx: GatewayContext, req: IncomingMessage): EgressClaims {
  const match = /^\/s\/([^/?]+)$/.exec(req.url ?? "");
  if (req.method !== "POST" || !match) {
    throw new EgressRefusal(404, "egress_route", "not an egress gateway route");
  }
  const token = req.headers[wire.EGRESS_TOKEN_HEADER];
  if (typeof token !== "string") {
    throw new EgressRefusal(401, "egress_token_invalid", "the request carries no egress token");
  }
  const verified = ctx.signer.verify(token, ctx.now());
  if (!verified.ok) {
    throw verified.reason === "expired"
      ? new EgressRefusal(
          401,
          "egress_token_expired",
          "the egress token has expired; tokens last one tool call",
        )
      : new EgressRefusal(
          401,
          "egress_token_invalid",
          "the egress token is not one this gateway issued",
        );
  }
  if (!ctx.live.isLive(verified.claims.id)) {
    throw new EgressRefusal(
      401,
      "egress_token_expired",
      "the egress token ended with its tool call (run, preview or apply); make requests while the call runs and await them before it returns",
    );
  }
  if (verified.claims.sessionId !== decodeURIComponent(match[1]!)) {
    throw new EgressRefusal(
      403,
      "egress_token_session",
      "the egress token belongs to another session",
    );
  }
  return verified.claims;
}

async function findConnection(
  ctx: GatewayContext,
  claims: EgressClaims,
  req: IncomingMessage,
): Promise<ConnectionDeclaration> {
  const id = String(req.headers[wire.EGRESS_CONNECTION_HEADER] ?? "");
  const declared = await ctx.options.connections({
    agentId: claims.agentId,
    ...(claims.deploymentId ? { deploymentId: claims.deploymentId } : {}),
  });
  const connection = declared.find((c) => c.id === id);
  if (!connection) {
    throw new EgressRefusal(
      403,
      "egress_connection_unknown",
      `the deployment of agent "${claims.agentId}" declares no connection "${id}"; declare it with defineConnection in opencomputer/agents/${claims.agentId}/connections/ or opencomputer/connections/ and build again`,
      "connection",
    );
  }
  return connection;
}

function checkOrigin(ctx: GatewayContext, origin: string): void {
  const url = new URL(origin);
  if (url.protocol === "https:") return;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname) && ctx.options.devMode) return;
  throw new EgressRefusal(
    403,
    "egress_origin_insecure",
    `${origin} is not https; plain http reaches only 127.0.0.1/localhost, and only in dev mode`,
    "connection",
  );
}

function event(claims: EgressClaims, type: EgressEvent["type"], data: JsonObject): EgressEvent {
  return { type, ...(claims.turnId ? { turnId: claims.turnId } : {}), data };
}

/** The agent's own `Idempotency-Key` header (never a declared, possibly secret, header). */
function idempotencyKeyOf(
  connection: { headers: Record<string, unknown> },
  headers: Headers,
): string | undefined {
  const declared = Object.keys(connection.headers).some(
    (n) => n.toLowerCase() === "idempotency-key",
  );
  return declared ? undefined : (headers.get("idempotency-key") ?? undefined);
}
