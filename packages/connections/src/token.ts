// Egress tokens: HMAC-SHA256-signed claims, checked without any lookup, so a token works in
// whichever process the agent code runs and costs nothing to issue per tool call. The key is
// random per gateway unless the operator gives one (several control-plane processes sharing a
// key): restarting the gateway invalidates every token, which short lifetimes make harmless.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export interface EgressClaims {
  sessionId: string;
  agentId: string;
  /** The session's deployment: its connections are the ones the gateway allows. */
  deploymentId?: string;
  environment: string;
  /** The turn the call belongs to, so egress events land in that turn. */
  turnId?: string;
  /** Epoch milliseconds after which the token is refused. */
  expiresAt: number;
}

const VERSION = "oce1";

export class TokenSigner {
  private readonly key: Buffer;

  constructor(key?: Uint8Array) {
    this.key = key ? Buffer.from(key) : randomBytes(32);
    if (this.key.length < 32) throw new Error("an egress token key needs at least 32 bytes");
  }

  sign(claims: EgressClaims): string {
    const payload = Buffer.from(JSON.stringify(claims), "utf8").toString("base64url");
    return `${VERSION}.${payload}.${this.mac(payload)}`;
  }

  /** The claims of a token this signer made, or why it is refused. */
  verify(
    token: string,
    now = Date.now(),
  ): { ok: true; claims: EgressClaims } | { ok: false; reason: "malformed" | "expired" } {
    const [version, payload, mac, extra] = token.split(".");
    if (version !== VERSION || !payload || !mac || extra !== undefined) {
      return { ok: false, reason: "malformed" };
    }
    const expected = Buffer.from(this.mac(payload), "utf8");
    const given = Buffer.from(mac, "utf8");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      return { ok: false, reason: "malformed" };
    }
    let claims: EgressClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as EgressClaims;
    } catch {
      return { ok: false, reason: "malformed" };
    }
    if (typeof claims.expiresAt !== "number" || claims.expiresAt <= now) {
      return { ok: false, reason: "expired" };
    }
    return { ok: true, claims };
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.key).update(`${VERSION}.${payload}`).digest("base64url");
  }
}
