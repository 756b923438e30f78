import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { PROJECT_ID } from "@opencomputer/runtime";
import type { Auth } from "./auth.ts";

/** One API key as stored: never the key itself, only its sha256. */
export interface StoredKey {
  id: string;
  name: string;
  /** The project whose sessions the key sees (older files without it mean `default`). */
  projectId?: string;
  /** `sha256:<hex>` of the key. */
  hash: string;
  createdAt: string;
  revokedAt: string | null;
}

const sha = (key: string) => `sha256:${createHash("sha256").update(key, "utf8").digest("hex")}`;

/**
 * API keys in a JSON file (`.opencomputer/keys.json`), stored hashed: `opencomputer keys
 * create` prints a key once, and nothing can show it again. Written atomically (temp file +
 * rename) with mode 0600.
 */
export class KeyFile {
  constructor(readonly path: string) {}

  list(): StoredKey[] {
    if (!existsSync(this.path)) return [];
    const parsed = JSON.parse(readFileSync(this.path, "utf8")) as { keys?: StoredKey[] };
    return parsed.keys ?? [];
  }

  /** Creates a key; returns it in clear — the only time it is shown. */
  create(name = "default", projectId = "default"): { key: string; stored: StoredKey } {
    if (typeof name !== "string" || name.length === 0 || name.length > 100) {
      throw new OpenComputerError("invalid_input", "name: must be 1 to 100 characters", {
        path: "name",
      });
    }
    if (typeof projectId !== "string" || !PROJECT_ID.test(projectId)) {
      throw new OpenComputerError("invalid_input", `project: must match ${PROJECT_ID}`, {
        path: "project",
      });
    }
    const key = `oc_${randomBytes(24).toString("base64url")}`;
    const stored: StoredKey = {
      id: `key_${randomBytes(6).toString("hex")}`,
      name,
      projectId,
      hash: sha(key),
      createdAt: new Date().toISOString(),
      revokedAt: null,
    };
    this.save([...this.list(), stored]);
    return { key, stored };
  }

  revoke(id: string): StoredKey {
    const keys = this.list();
    const found = keys.find((k) => k.id === id);
    if (!found) throw new OpenComputerError("not_found", `No key ${id}`, { path: "id" });
    found.revokedAt ??= new Date().toISOString();
    this.save(keys);
    return found;
  }

  private save(keys: StoredKey[]): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
  }
}

interface KnownKey {
  hash: Buffer;
  projectId: string;
}

/**
 * Auth against a key file, re-read when it changes, so `keys create` and `keys revoke` take
 * effect on a running server. Each key sees its own project (`keys create --project`).
 * `extra` keys (e.g. from the environment) are accepted too, for `extraProjectId`.
 */
export function createKeyFileAuth(
  path: string,
  extra: string[] = [],
  extraProjectId = "default",
): Auth {
  const file = new KeyFile(path);
  let cache: { mtimeMs: number; keys: KnownKey[] } | null = null;
  const extraKeys = extra.map((k) => ({ hash: Buffer.from(sha(k)), projectId: extraProjectId }));
  const known = (): KnownKey[] => {
    const mtimeMs = existsSync(path) ? statSync(path).mtimeMs : -1;
    if (!cache || cache.mtimeMs !== mtimeMs) {
      cache = {
        mtimeMs,
        keys: file
          .list()
          .filter((k) => !k.revokedAt)
          .map((k) => ({ hash: Buffer.from(k.hash), projectId: k.projectId ?? "default" })),
      };
    }
    return [...cache.keys, ...extraKeys];
  };
  return {
    async verify(key) {
      const d = Buffer.from(sha(key));
      let match: string | null = null;
      // Every key is compared (no early exit) so timing does not tell which key matched.
      for (const k of known())
        if (k.hash.length === d.length && timingSafeEqual(k.hash, d)) match = k.projectId;
      return match === null ? null : { projectId: match };
    },
  };
}
