import { createHash, timingSafeEqual } from "node:crypto";

/** Decides who a key belongs to; `null` means the key is unknown. */
export interface Auth {
  verify(key: string): Promise<{ projectId: string } | null>;
}

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest();

/**
 * Fixed keys for development and tests. Keys are compared as sha256 digests so every comparison
 * has the same length, and with timingSafeEqual so timing does not reveal a matching prefix.
 */
export function createStaticKeyAuth(keys: string[], projectId = "default"): Auth {
  const digests = keys.map(digest);
  return {
    async verify(key) {
      const d = digest(key);
      let ok = false;
      // Every key is compared (no early exit) so timing does not tell which key matched.
      for (const known of digests) if (timingSafeEqual(known, d)) ok = true;
      return ok ? { projectId } : null;
    },
  };
}
