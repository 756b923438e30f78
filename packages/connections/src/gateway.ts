// The egress gateway: the only place a secret value meets a request. Agent code reaches it on
// loopback with a short-lived, session-bound token (see connection-fetch.ts in the agent SDK for
// the wire format); per request it checks the token, the connection the agent's deployment
// declared, the method, the path and the body size, adds the secret headers, calls the origin
// and streams the answer back, reporting egress.request / egress.response / egress.failed.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  type ConnectionDeclaration,
  checkEgressPath,
  type JsonObject,
  egressWire as wire,
} from "@opencomputer/agent";
import { EgressRefusal } from "./refusal.ts";
import type { SecretResolver } from "./secret-store.ts";
import { type EgressClaims, TokenSigner } from "./token.ts";
import { callUpstream } from "./upstream.ts";

export interface EgressEvent {
  type: "egress.request" | "egress.response" | "egress.failed";
  turnId?: string;
  data: JsonObject;
}

/** Receives the events of each request, for the session's log. Must not throw. */
export type EgressEventSink = (sessionId: string, event: EgressEvent) => void | Promise<void>;

/** The connections the deployment of an agent declared (from its manifest). */
export type ConnectionResolver = (target: {
  agentId: string;
  deploymentId?: string;
}) => readonly ConnectionDeclaration[] | Promise<readonly ConnectionDeclaration[]>;

export interface EgressGatewayOptions {
  secrets: SecretResolver;
  connections: ConnectionResolver;
  events?: EgressEventSink;
  /** Allows plain-http origins on 127.0.0.1/localhost (`opencomputer dev`). */
  devMode?: boolean;
  /** HMAC key for tokens (≥ 32 bytes); random per gateway when absent. */
  tokenKey?: Uint8Array;
  /** Token lifetime when issueToken is given none (default 15 minutes). */
  defaultTtlMs?: number;
  maxRedirects?: number;
  log?: { error(message: string, fields?: Record<string, unknown>): void };
}

export interface TokenRequest {
  agentId: string;
  environment: string;
  deploymentId?: string;
  turnId?: string;
  ttlMs?: number;
}

export type EgressGateway = ReturnType<typeof createEgressGateway>;

/** Hop-by-hop and framing headers are the gateway's business, not the agent's or the origin's. */
const DROPPED_REQUEST_HEADERS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);
const DROPPED_RESPONSE_HEADERS = new Set([
  ...DROPPED_REQUEST_HEADERS,
  // fetch already decoded the body: passing the encoding on would make the client decode twice.
  "content-encoding",
  "set-cookie",
  "set-cookie2",
]);
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export function createEgressGateway(options: EgressGatewayOptions) {
  const signer = new TokenSigner(options.tokenKey);
  const defaultTtlMs = options.defaultTtlMs ?? 15 * 60_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const server: Server = createServer((req, res) => void handle(req, res));
  let baseUrl: string | undefined;

  const emit = async (sessionId: string, event: EgressEvent) => {
    try {
      await options.events?.(sessionId, event);
    } catch (error) {
      options.log?.error("egress event not recorded", {
        sessionId,
        type: event.type,
        error: String(error),
      });
    }
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const controller = new AbortController();
    // The agent's signal (or a crashed worker) closes its connection: stop the origin call too.
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    let claims: EgressClaims | undefined;
    let target: { connectionId: string; method: string; path: string } | undefined;
    let requested = false;
    const started = performance.now();
    try {
      claims = authenticate(req);
      const connection = await findConnection(claims, req);
      const method = String(req.headers[wire.EGRESS_METHOD_HEADER] ?? "").toUpperCase();
      const rawPath = decodePath(req.headers[wire.EGRESS_PATH_HEADER]);
      target = { connectionId: connection.id, method, path: rawPath.split("?")[0] ?? rawPath };
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
      target.path = checked.path.split("?")[0] ?? checked.path;
      checkOrigin(connection.origin);
      const headers = await upstreamHeaders(req, connection, claims.environment);
      const body = await readBody(req);
      if (body && (method === "GET" || method === "HEAD")) {
        throw new EgressRefusal(
          400,
          "egress_body_invalid",
          `a ${method} request cannot have a body`,
          "init.body",
        );
      }
      requested = true;
      await emit(claims.sessionId, event(claims, "egress.request", target));
      const upstream = await callUpstream({
        connection,
        method,
        path: checked.path,
        headers,
        body,
        signal: controller.signal,
        maxRedirects,
      });
      const pairs: [string, string][] = [];
      for (const [name, value] of upstream.headers) {
        if (!DROPPED_RESPONSE_HEADERS.has(name)) pairs.push([name, value]);
      }
      res.writeHead(200, {
        [wire.EGRESS_STATUS_HEADER]: String(upstream.status),
        [wire.EGRESS_STATUS_TEXT_HEADER]: encodeURIComponent(upstream.statusText),
        [wire.EGRESS_HEADERS_HEADER]: wire.encodeHeaderPairs(pairs),
        "content-type": "application/octet-stream",
      });
      if (upstream.body) {
        await pipeline(
          Readable.fromWeb(upstream.body as import("node:stream/web").ReadableStream),
          res,
        );
      } else res.end();
      await emit(
        claims.sessionId,
        event(claims, "egress.response", {
          ...target,
          status: upstream.status,
          durationMs: Math.round(performance.now() - started),
        }),
      );
    } catch (error) {
      const refusal = asRefusal(error, controller.signal);
      if (claims && target) {
        await emit(
          claims.sessionId,
          event(claims, "egress.failed", { ...target, message: refusal.message }),
        );
      } else if (claims && !requested) {
        // Refused before the connection was known (e.g. undeclared): still the session's business.
        await emit(
          claims.sessionId,
          event(claims, "egress.failed", {
            connectionId: String(req.headers[wire.EGRESS_CONNECTION_HEADER] ?? ""),
            method: String(req.headers[wire.EGRESS_METHOD_HEADER] ?? ""),
            path: "",
            message: refusal.message,
          }),
        );
      }
      if (!res.headersSent) {
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
      } else res.destroy();
    }
  }

  function authenticate(req: IncomingMessage): EgressClaims {
    const match = /^\/s\/([^/?]+)$/.exec(req.url ?? "");
    if (req.method !== "POST" || !match) {
      throw new EgressRefusal(404, "egress_route", "not an egress gateway route");
    }
    const token = req.headers[wire.EGRESS_TOKEN_HEADER];
    if (typeof token !== "string") {
      throw new EgressRefusal(401, "egress_token_invalid", "the request carries no egress token");
    }
    const verified = signer.verify(token);
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
    claims: EgressClaims,
    req: IncomingMessage,
  ): Promise<ConnectionDeclaration> {
    const id = String(req.headers[wire.EGRESS_CONNECTION_HEADER] ?? "");
    const declared = await options.connections({
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

  function checkOrigin(origin: string): void {
    const url = new URL(origin);
    if (url.protocol === "https:") return;
    if (url.protocol === "http:" && LOOPBACK.has(url.hostname) && options.devMode) return;
    throw new EgressRefusal(
      403,
      "egress_origin_insecure",
      `${origin} is not https; plain http reaches only 127.0.0.1/localhost, and only in dev mode`,
      "connection",
    );
  }

  async function upstreamHeaders(
    req: IncomingMessage,
    connection: ConnectionDeclaration,
    environment: string,
  ) {
    const pairs = wire.decodeHeaderPairs(
      req.headers[wire.EGRESS_HEADERS_HEADER] as string | undefined,
    );
    if (!pairs)
      throw new EgressRefusal(
        400,
        "egress_headers_invalid",
        "the request headers are malformed",
        "init.headers",
      );
    const headers = new Headers();
    for (const [name, value] of pairs) {
      const lower = name.toLowerCase();
      if (wire.CREDENTIAL_HEADERS.includes(lower)) {
        throw new EgressRefusal(
          400,
          "egress_header_refused",
          `the "${lower}" header carries credentials, which come only from the connection's secret headers`,
          `init.headers.${lower}`,
        );
      }
      if (!DROPPED_REQUEST_HEADERS.has(lower)) headers.append(lower, value);
    }
    // Declared headers override the agent's: the agent cannot replace a secret header.
    for (const [name, value] of Object.entries(connection.headers)) {
      if (typeof value === "string") {
        headers.set(name, value);
        continue;
      }
      const secret = await options.secrets.resolve(environment, value.secret);
      if (secret === undefined) {
        throw new EgressRefusal(
          424,
          "egress_secret_missing",
          `the secret ${value.secret} is not set for the ${environment} environment; run \`opencomputer secrets set ${value.secret} --environment ${environment}\`${environment === "development" ? " or add it to opencomputer/.env.local" : ""}`,
          `headers.${name}`,
        );
      }
      headers.set(name, `${value.prefix ?? ""}${secret}${value.suffix ?? ""}`);
    }
    return headers;
  }

  return {
    /** Starts listening on 127.0.0.1 (an ephemeral port unless given); resolves to the base URL. */
    async listen(port = 0): Promise<string> {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => resolve());
      });
      const address = server.address() as AddressInfo;
      baseUrl = `http://127.0.0.1:${address.port}`;
      return baseUrl;
    },
    get url(): string {
      if (!baseUrl) throw new Error("the egress gateway is not listening; call listen() first");
      return baseUrl;
    },
    /** The URL agent code of `sessionId` sends to; a token only works on its own session's URL. */
    sessionUrl(sessionId: string): string {
      return `${this.url}/s/${encodeURIComponent(sessionId)}`;
    },
    /** A signed token for one session (ttl default 15 minutes). */
    issueToken(sessionId: string, request: TokenRequest): string {
      const { ttlMs, ...rest } = request;
      return signer.sign({ sessionId, ...rest, expiresAt: Date.now() + (ttlMs ?? defaultTtlMs) });
    },
    /** What the runtime puts in the egress context of one execution of agent code. */
    issue(claims: { sessionId: string } & TokenRequest): { gatewayUrl: string; token: string } {
      const { sessionId, ...request } = claims;
      return { gatewayUrl: this.sessionUrl(sessionId), token: this.issueToken(sessionId, request) };
    },
    async close(): Promise<void> {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function event(claims: EgressClaims, type: EgressEvent["type"], data: JsonObject): EgressEvent {
  return { type, ...(claims.turnId ? { turnId: claims.turnId } : {}), data };
}

function decodePath(value: string | string[] | undefined): string {
  if (typeof value !== "string") return "";
  try {
    return decodeURIComponent(value);
  } catch {
    return "";
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
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

function asRefusal(error: unknown, signal: AbortSignal): EgressRefusal {
  if (error instanceof EgressRefusal) return error;
  if (signal.aborted)
    return new EgressRefusal(499, "egress_cancelled", "the request was cancelled");
  return new EgressRefusal(
    502,
    "egress_failed",
    `the request failed: ${(error as Error)?.message ?? String(error)}`,
  );
}
