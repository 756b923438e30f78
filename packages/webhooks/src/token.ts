// A webhook's token is its credential: 32 random bytes, shown once, kept only as a digest.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const TOKEN_PREFIX = "ocwh_";

export function newToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

export function tokenHash(token: string): string {
  return `sha256:${createHash("sha256").update(token).digest("hex")}`;
}

/** Compares digests in constant time (both are fixed-length hex of the same hash). */
export function tokenMatches(token: string, hash: string): boolean {
  const a = Buffer.from(tokenHash(token));
  const b = Buffer.from(hash);
  return a.length === b.length && timingSafeEqual(a, b);
}
