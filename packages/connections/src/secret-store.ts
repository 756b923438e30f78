// Secrets at rest: write-only from every API's point of view (set, remove, list names, dates
// and origin bindings); only the egress gateway resolves a value, per request. Values are
// encrypted with AES-256-GCM under a key file the server holds (0600); each value's environment
// and name, and the origins it is bound to, are bound into the ciphertext (additional data), so
// a value copied to another slot, or a binding edited in the file, fails to open.
//
// File versions: 1 (no bindings) is read as is and its records stay valid (unbound, sealed
// without origins); every write stores version 2, which an older opencomputer refuses rather
// than ignoring the bindings in it.

import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { normalizeOrigins } from "./origin-binding.ts";
import { SecretError } from "./secret-error.ts";
import { checkEnvironment, checkName, checkValue } from "./secret-rules.ts";

export {
  checkEnvironment,
  checkName,
  SECRET_ENVIRONMENTS,
  SECRET_VALUE_MAX_BYTES,
  type SecretEnvironment,
} from "./secret-rules.ts";
export { SecretError };

export interface SecretInfo {
  name: string;
  environment: string;
  createdAt: string;
  updatedAt: string;
  /** The only origins the gateway sends it to; empty: any connection's origin. */
  origins: string[];
}

/** A value with the origins it may be sent to (none listed: any). */
export interface ResolvedSecret {
  value: string;
  origins?: readonly string[];
}

/** What the gateway needs: a value (bare, or with its binding) by environment and name. */
export interface SecretResolver {
  resolve(environment: string, name: string): Promise<string | ResolvedSecret | undefined>;
}

export interface SetSecretOptions {
  /** The origins it may be sent to; [] unbinds; absent keeps an existing secret's binding. */
  origins?: readonly string[];
}

/** The secret store port: no method returns a value except `resolve`, which only the gateway calls. */
export interface SecretStore extends SecretResolver {
  set(
    environment: string,
    name: string,
    value: string,
    options?: SetSecretOptions,
  ): Promise<{ created: boolean; origins: string[] }>;
  remove(environment: string, name: string): Promise<boolean>;
  list(environment: string): Promise<SecretInfo[]>;
}

interface Sealed {
  iv: string;
  tag: string;
  data: string;
  createdAt: string;
  updatedAt: string;
  /** Present from version 2 on (then sealed with them); absent in version 1 records. */
  origins?: string[];
}
interface SecretFile {
  version: 1 | 2;
  environments: Record<string, Record<string, Sealed>>;
}

/** `<project>/.opencomputer/secrets.json`, key in `secret.key` beside it. */
export function projectSecretPaths(projectDir: string) {
  const dir = join(projectDir, ".opencomputer");
  return { file: join(dir, "secrets.json"), keyFile: join(dir, "secret.key") };
}

export class FileSecretStore implements SecretStore {
  private key: Buffer | undefined;

  constructor(private readonly paths: { file: string; keyFile: string }) {}

  async set(
    environment: string,
    name: string,
    value: string,
    options: SetSecretOptions = {},
  ): Promise<{ created: boolean; origins: string[] }> {
    checkEnvironment(environment);
    checkName(name);
    checkValue(value);
    const given = options.origins ? normalizeOrigins(options.origins) : undefined;
    const file = this.read();
    const slot = file.environments[environment] ?? {};
    file.environments[environment] = slot;
    const now = new Date().toISOString();
    const previous = slot[name];
    // A new value for a bound secret stays bound: rotating a key must not widen where it goes.
    const origins = given ?? previous?.origins ?? [];
    slot[name] = {
      ...this.seal(environment, name, value, origins),
      origins,
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
    };
    this.write(file);
    return { created: previous === undefined, origins };
  }

  async remove(environment: string, name: string): Promise<boolean> {
    checkEnvironment(environment);
    checkName(name);
    const file = this.read();
    const slot = file.environments[environment];
    if (!slot?.[name]) return false;
    delete slot[name];
    this.write(file);
    return true;
  }

  async list(environment: string): Promise<SecretInfo[]> {
    checkEnvironment(environment);
    const slot = this.read().environments[environment] ?? {};
    return Object.entries(slot)
      .map(([name, s]) => ({
        name,
        environment,
        createdAt: s.createdAt,
        updatedAt: s.updatedAt,
        origins: [...(s.origins ?? [])],
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async resolve(environment: string, name: string): Promise<ResolvedSecret | undefined> {
    const sealed = this.read().environments[environment]?.[name];
    if (!sealed) return undefined;
    const decipher = createDecipheriv(
      "aes-256-gcm",
      this.loadKey(),
      Buffer.from(sealed.iv, "base64"),
    );
    decipher.setAAD(aad(environment, name, sealed.origins));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    try {
      const value = Buffer.concat([
        decipher.update(Buffer.from(sealed.data, "base64")),
        decipher.final(),
      ]).toString("utf8");
      return { value, origins: [...(sealed.origins ?? [])] };
    } catch {
      throw new SecretError(
        "secret_unreadable",
        `The secret ${name} (${environment}) cannot be decrypted with ${this.paths.keyFile}: the key file changed or the store was edited; set the secret again`,
        { path: name },
      );
    }
  }

  private seal(environment: string, name: string, value: string, origins: readonly string[]) {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.loadKey(), iv);
    cipher.setAAD(aad(environment, name, origins));
    const data = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    return {
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      data: data.toString("base64"),
    };
  }

  private loadKey(): Buffer {
    if (this.key) return this.key;
    const { keyFile } = this.paths;
    if (!existsSync(keyFile)) {
      mkdirSync(dirname(keyFile), { recursive: true });
      try {
        writeFileSync(keyFile, `${randomBytes(32).toString("base64")}\n`, {
          mode: 0o600,
          flag: "wx",
        });
      } catch (error) {
        // Another process created it first: use theirs.
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    if ((statSync(keyFile).mode & 0o077) !== 0) {
      throw new SecretError(
        "secret_key_exposed",
        `${keyFile} is readable by other users; run \`chmod 600 ${keyFile}\` (and consider rotating the secrets it protects)`,
        { path: keyFile },
      );
    }
    const key = Buffer.from(readFileSync(keyFile, "utf8").trim(), "base64");
    if (key.length !== 32) {
      throw new SecretError(
        "secret_key_invalid",
        `${keyFile} does not hold a 32-byte key (base64)`,
        { path: keyFile },
      );
    }
    this.key = key;
    return key;
  }

  private read(): SecretFile {
    if (!existsSync(this.paths.file)) return { version: 2, environments: {} };
    const parsed = JSON.parse(readFileSync(this.paths.file, "utf8")) as SecretFile;
    if ((parsed.version !== 1 && parsed.version !== 2) || typeof parsed.environments !== "object") {
      throw new SecretError(
        "secret_store_invalid",
        `${this.paths.file} is not a secret store of version 1 or 2`,
        { path: this.paths.file },
      );
    }
    return parsed;
  }

  private write(file: SecretFile): void {
    mkdirSync(dirname(this.paths.file), { recursive: true });
    const temp = `${this.paths.file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    const current: SecretFile = { version: 2, environments: file.environments };
    writeFileSync(temp, `${JSON.stringify(current, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.paths.file);
  }
}

/**
 * What a ciphertext is bound to. Version 1 records (no origins field) keep their original
 * additional data; a record with origins is sealed with them, so removing or editing the
 * binding in the file makes the value fail to open instead of widening where it goes.
 */
function aad(environment: string, name: string, origins: readonly string[] | undefined): Buffer {
  if (origins === undefined) {
    return Buffer.from(`opencomputer.secret.v1\0${environment}\0${name}`, "utf8");
  }
  return Buffer.from(
    `opencomputer.secret.v2\0${environment}\0${name}\0${origins.join(" ")}`,
    "utf8",
  );
}
