// Egress tokens: HMAC-SHA256-signed claims, so a token works in whichever process the agent
// code runs and a forged one is refused without any lookup. The signature alone cannot end a
// token early, so each token also carries a random id the issuing gateway holds while the tool
// call runs (live-tokens.ts): the call settling revokes it. The key is random per gateway unless
// the operator gives one; restarting the gateway invalidates every token.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export interface EgressClaims {
  /** Random per token: what the issuing gateway holds live until the call settles. */
  id?: string;
  sessionId: string;
  agentId: string;
  /** The session's deployment: its connections are the ones the gateway allows. */
  deploymentId?: string;
  environment: string;
  /** The turn the call belongs to, so egress events land in that turn. */
  turnId?: string;
  /** The tool call whose code holds the token, what it runs, and an apply's decision. */
  callId?: string;
  phase?: "run" | "preview" | "apply";
  decisionId?: string;
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
    const claims = this.open(token);
    if (!claims) return { ok: false, reason: "malformed" };
    if (typeof claims.expiresAt !== "number" || claims.expiresAt <= now) {
      return { ok: false, reason: "expired" };
    }
    return { ok: true, claims };
  }

  /** The claims of a token this signer made, expired or not; undefined for anything else. */
  open(token: string): EgressClaims | undefined {
    const [version, payload, mac, extra] = token.split(".");
    if (version !== VERSION || !payload || !mac || extra !== undefined) return undefined;
    const expected = Buffer.from(this.mac(payload), "utf8");
    const given = Buffer.from(mac, "utf8");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as EgressClaims;
    } catch {
      return undefined;
    }
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.key).update(`${VERSION}.${payload}`).digest("base64url");
  }
}
