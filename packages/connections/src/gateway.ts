// The egress gateway: the only place a secret value meets a request. Agent code reaches it on
// loopback with a session-bound token that lives as long as its tool call (see
// connection-fetch.ts in the agent SDK for the wire format); per request it checks the token,
// the connection the agent's deployment declared, the method, the path and the body size, adds
// the secret headers (refused when a secret is bound to other origins), calls the origin and
// streams the answer back with any echo of a secret replaced, reporting egress.request /
// egress.response / egress.failed.

import { randomBytes } from "node:crypto";
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
import { asRefusal, decodePath, readBody, writeRefusal, writeRelayHead } from "./gateway-http.ts";
import { LiveTokens } from "./live-tokens.ts";
import { echoForms, redactingStream } from "./redact.ts";
import { EgressRefusal } from "./refusal.ts";
import { upstreamHeaders } from "./secret-headers.ts";
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
  /** The longest a token lives when its call is never revoked (default 15 minutes). */
  defaultTtlMs?: number;
  maxRedirects?: number;
  /** Epoch milliseconds, for token lifetimes (tests). */
  now?: () => number;
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

export function createEgressGateway(options: EgressGatewayOptions) {
  const now = options.now ?? Date.now;
  const signer = new TokenSigner(options.tokenKey);
  const live = new LiveTokens(now);
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
    const state: RequestState = { forms: [] };
    let untrack = () => {};
    const started = performance.now();
    try {
      const claims = authenticate(req);
      state.claims = claims;
      untrack = live.track(claims.id ?? "", controller);
      const request = await prepare(req, claims, state);
      // Revoked (its call ended) or abandoned while being checked: the origin is not called.
      controller.signal.throwIfAborted();
      await emit(claims.sessionId, event(claims, "egress.request", { ...state.target! }));
      const upstream = await callUpstream({ ...request, signal: controller.signal, maxRedirects });
      writeRelayHead(res, upstream, state.forms);
      if (upstream.body) {
        const body = Readable.fromWeb(upstream.body as import("node:stream/web").ReadableStream);
        if (state.forms.length > 0) await pipeline(body, redactingStream(state.forms), res);
        else await pipeline(body, res);
      } else res.end();
      await emit(
        claims.sessionId,
        event(claims, "egress.response", {
          ...state.target!,
          status: upstream.status,
          durationMs: Math.round(performance.now() - started),
        }),
      );
    } catch (error) {
      const refusal = asRefusal(error, controller.signal, state.forms);
      await reportFailure(req, state, refusal);
      writeRefusal(res, refusal);
    } finally {
      untrack();
    }
  }

  /** Every check before the origin is called; the request to send, with its secret headers. */
  async function prepare(req: IncomingMessage, claims: EgressClaims, state: RequestState) {
    const connection = await findConnection(claims, req);
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
    checkOrigin(connection.origin);
    const { headers, values } = await upstreamHeaders(
      req.headers[wire.EGRESS_HEADERS_HEADER] as string | undefined,
      connection,
      claims.environment,
      options.secrets,
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
  async function reportFailure(req: IncomingMessage, state: RequestState, refusal: EgressRefusal) {
    const { claims, target } = state;
    if (!claims) return;
    // Refused before the connection was known (e.g. undeclared): named as agent code asked.
    const data = target ?? {
      connectionId: String(req.headers[wire.EGRESS_CONNECTION_HEADER] ?? ""),
      method: String(req.headers[wire.EGRESS_METHOD_HEADER] ?? ""),
      path: "",
    };
    await emit(
      claims.sessionId,
      event(claims, "egress.failed", { ...data, message: refusal.message }),
    );
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
    const verified = signer.verify(token, now());
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
    if (!live.isLive(verified.claims.id)) {
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
    /** A signed token for one session, live until revoked or `ttlMs` (default 15 minutes). */
    issueToken(sessionId: string, request: TokenRequest): string {
      const { ttlMs, ...rest } = request;
      const id = randomBytes(16).toString("base64url");
      const expiresAt = now() + (ttlMs ?? defaultTtlMs);
      live.add(id, expiresAt);
      return signer.sign({ id, sessionId, ...rest, expiresAt });
    },
    /** What the runtime puts in the egress context of one execution of agent code. */
    issue(claims: { sessionId: string } & TokenRequest): { gatewayUrl: string; token: string } {
      const { sessionId, ...request } = claims;
      return { gatewayUrl: this.sessionUrl(sessionId), token: this.issueToken(sessionId, request) };
    },
    /**
     * Ends a token when its call settles: later requests are refused (egress_token_expired) and
     * requests still in flight are aborted. False for a token that was not live.
     */
    revoke(token: string): boolean {
      const id = signer.open(token)?.id;
      return id === undefined ? false : live.revoke(id);
    },
    /** Tokens issued and neither revoked nor pruned after expiry (diagnostics, tests). */
    get liveTokens(): number {
      return live.size;
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
