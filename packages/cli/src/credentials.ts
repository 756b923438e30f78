// Where the CLI keeps the servers a person logged in to and the projects linked to them: one
// JSON file in the user's config directory (`$OPENCOMPUTER_CONFIG_DIR`, else
// `$XDG_CONFIG_HOME/opencomputer`, else `~/.config/opencomputer`), mode 0600 in a 0700
// directory, written whole through a rename so a crash never leaves half a file. API keys are
// stored in clear there, like other CLIs' tokens; the file is the person's own.

import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";

export interface Credentials {
  /** By server URL (no trailing slash). */
  servers: Record<string, { key: string; savedAt: string }>;
  /** By absolute project directory. */
  projects: Record<string, { url: string }>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPENCOMPUTER_CONFIG_DIR) return resolve(env.OPENCOMPUTER_CONFIG_DIR);
  const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homedir(), ".config");
  return join(base, "opencomputer");
}

export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), "credentials.json");
}

export function normalizeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OpenComputerError(
      "usage",
      `"${url}" is not a URL; e.g. --url https://agents.example.com`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new OpenComputerError("usage", `--url must be http(s), got ${parsed.protocol}`);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}

export function readCredentials(env: NodeJS.ProcessEnv = process.env): Credentials {
  const file = credentialsFile(env);
  if (!existsSync(file)) return { servers: {}, projects: {} };
  if (!lstatSync(file).isFile()) {
    throw new OpenComputerError("credentials_invalid", `${file} is not a regular file`);
  }
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<Credentials>;
    return { servers: value.servers ?? {}, projects: value.projects ?? {} };
  } catch (error) {
    throw new OpenComputerError(
      "credentials_invalid",
      `${file} is not valid JSON (${(error as Error).message}); fix it or remove it and run \`opencomputer login\` again`,
    );
  }
}

export function writeCredentials(
  credentials: Credentials,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const file = credentialsFile(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(temp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
  return file;
}

/** The server linked to `dir` or the nearest linked directory above it. */
export function linkedServer(
  dir: string,
  credentials: Credentials,
): { url: string; key: string; project: string } | undefined {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const link = credentials.projects[at];
    const key = link && credentials.servers[link.url]?.key;
    if (link && key) return { url: link.url, key, project: at };
    if (dirname(at) === at) return undefined;
  }
}
