// The egress gateway: the only place a secret value meets a request. Agent code reaches it on
// loopback with a session-bound token that lives as long as its tool call (see
// connection-fetch.ts in the agent SDK for the wire format); per request it checks the token,
// the connection the agent's deployment declared, the method, the path and the body size, adds
// the secret headers (refused when a secret is bound to other origins), calls the origin and
// streams the answer back with any echo of a secret replaced, reporting egress.request /
// egress.response / egress.failed. This file holds the gateway's lifecycle and its tokens; one
// request's path is in gateway-request.ts.

import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { JsonObject } from "@opencomputer/agent";
import type { ConnectionDeclaration } from "@opencomputer/agent/internal";
import { type GatewayContext, handleEgress } from "./gateway-request.ts";
import { LiveTokens } from "./live-tokens.ts";
import type { SecretResolver } from "./secret-store.ts";
import { type EgressClaims, TokenSigner } from "./token.ts";

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
  /**
   * Sees each request that passed every check, just before the origin is called (`opencomputer
   * test --crash` records which tool call sent what). Gets no header but the agent's own
   * `Idempotency-Key`, so never a secret.
   */
  observe?: (request: ObservedEgress) => void | Promise<void>;
}

export interface ObservedEgress {
  claims: EgressClaims;
  connectionId: string;
  method: string;
  path: string;
  idempotencyKey: string | undefined;
}

export interface TokenRequest {
  agentId: string;
  environment: string;
  deploymentId?: string;
  turnId?: string;
  /** The tool call (and for an apply, its decision) the execution belongs to; see EgressClaims. */
  callId?: string;
  phase?: "run" | "preview" | "apply";
  decisionId?: string;
  ttlMs?: number;
}

export type EgressGateway = ReturnType<typeof createEgressGateway>;

export function createEgressGateway(options: EgressGatewayOptions) {
  const now = options.now ?? Date.now;
  const signer = new TokenSigner(options.tokenKey);
  const live = new LiveTokens(now);
  const defaultTtlMs = options.defaultTtlMs ?? 15 * 60_000;
  const ctx: GatewayContext = {
    options,
    signer,
    live,
    now,
    maxRedirects: options.maxRedirects ?? 5,
    async emit(sessionId, event) {
      try {
        await options.events?.(sessionId, event);
      } catch (error) {
        options.log?.error("egress event not recorded", {
          sessionId,
          type: event.type,
          error: String(error),
        });
      }
    },
  };
  const server: Server = createServer((req, res) => void handleEgress(ctx, req, res));
  let baseUrl: string | undefined;

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
