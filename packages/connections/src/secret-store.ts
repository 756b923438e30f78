// Secrets at rest: write-only from every API's point of view (set, remove, list names and
// dates); only the egress gateway resolves a value, per request. Values are encrypted with
// AES-256-GCM under a key file the server holds (0600); each value's environment and name are
// bound into the ciphertext (additional data), so a value copied to another slot fails to open.

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
import { OpenComputerError, SECRET_NAME_PATTERN } from "@opencomputer/agent";

export const SECRET_ENVIRONMENTS = ["development", "production"] as const;
export type SecretEnvironment = (typeof SECRET_ENVIRONMENTS)[number];
/** Values are sent as header values: bounded, and without line breaks. */
export const SECRET_VALUE_MAX_BYTES = 16 * 1024;

export interface SecretInfo {
  name: string;
  environment: string;
  createdAt: string;
  updatedAt: string;
}

/** What the gateway needs: a value by environment and name, or undefined. */
export interface SecretResolver {
  resolve(environment: string, name: string): Promise<string | undefined>;
}

/** The secret store port: no method returns a value except `resolve`, which only the gateway calls. */
export interface SecretStore extends SecretResolver {
  set(environment: string, name: string, value: string): Promise<{ created: boolean }>;
  remove(environment: string, name: string): Promise<boolean>;
  list(environment: string): Promise<SecretInfo[]>;
}

export class SecretError extends OpenComputerError {}

interface Sealed {
  iv: string;
  tag: string;
  data: string;
  createdAt: string;
  updatedAt: string;
}
interface SecretFile {
  version: 1;
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

  async set(environment: string, name: string, value: string): Promise<{ created: boolean }> {
    checkEnvironment(environment);
    checkName(name);
    checkValue(value);
    const file = this.read();
    const slot = file.environments[environment] ?? {};
    file.environments[environment] = slot;
    const now = new Date().toISOString();
    const previous = slot[name];
    slot[name] = {
      ...this.seal(environment, name, value),
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
    };
    this.write(file);
    return { created: previous === undefined };
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
      .map(([name, s]) => ({ name, environment, createdAt: s.createdAt, updatedAt: s.updatedAt }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async resolve(environment: string, name: string): Promise<string | undefined> {
    const sealed = this.read().environments[environment]?.[name];
    if (!sealed) return undefined;
    const decipher = createDecipheriv(
      "aes-256-gcm",
      this.loadKey(),
      Buffer.from(sealed.iv, "base64"),
    );
    decipher.setAAD(aad(environment, name));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    try {
      return Buffer.concat([
        decipher.update(Buffer.from(sealed.data, "base64")),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new SecretError(
        "secret_unreadable",
        `The secret ${name} (${environment}) cannot be decrypted with ${this.paths.keyFile}: the key file changed or the store was edited; set the secret again`,
        { path: name },
      );
    }
  }

  private seal(environment: string, name: string, value: string) {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.loadKey(), iv);
    cipher.setAAD(aad(environment, name));
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
    if (!existsSync(this.paths.file)) return { version: 1, environments: {} };
    const parsed = JSON.parse(readFileSync(this.paths.file, "utf8")) as SecretFile;
    if (parsed.version !== 1 || typeof parsed.environments !== "object") {
      throw new SecretError(
        "secret_store_invalid",
        `${this.paths.file} is not a secret store of version 1`,
        {
          path: this.paths.file,
        },
      );
    }
    return parsed;
  }

  private write(file: SecretFile): void {
    mkdirSync(dirname(this.paths.file), { recursive: true });
    const temp = `${this.paths.file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.paths.file);
  }
}

function aad(environment: string, name: string): Buffer {
  return Buffer.from(`opencomputer.secret.v1\0${environment}\0${name}`, "utf8");
}

export function checkEnvironment(environment: string): asserts environment is SecretEnvironment {
  if (!(SECRET_ENVIRONMENTS as readonly string[]).includes(environment)) {
    throw new SecretError(
      "secret_environment_invalid",
      `environment must be ${SECRET_ENVIRONMENTS.join(" or ")}; got ${JSON.stringify(environment)}`,
      { path: "environment" },
    );
  }
}

export function checkName(name: string): void {
  if (typeof name !== "string" || !SECRET_NAME_PATTERN.test(name)) {
    throw new SecretError(
      "secret_name_invalid",
      `secret names are capital letters, digits and underscores, starting with a letter, at most 128 characters (${String(SECRET_NAME_PATTERN)}); got ${JSON.stringify(name)}`,
      { path: "name" },
    );
  }
}

function checkValue(value: string): void {
  if (typeof value !== "string" || value.length === 0) {
    throw new SecretError("secret_value_invalid", "the secret value is empty", { path: "value" });
  }
  if (/[\r\n\0]/.test(value)) {
    throw new SecretError(
      "secret_value_invalid",
      "the secret value contains a line break or NUL; secrets are sent as header values, which cannot",
      { path: "value" },
    );
  }
  if (Buffer.byteLength(value, "utf8") > SECRET_VALUE_MAX_BYTES) {
    throw new SecretError(
      "secret_value_invalid",
      `the secret value is larger than ${SECRET_VALUE_MAX_BYTES} bytes`,
      {
        path: "value",
      },
    );
  }
}
