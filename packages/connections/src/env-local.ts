// Development secrets from `opencomputer/.env.local`. The file is read when a request needs a
// name, and only that name is taken from it: nothing else in the file is loaded into memory or
// the environment, and agent code (which never sees the gateway's memory) cannot read it.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SecretResolver } from "./secret-store.ts";

/** `NAME=value` lines; `#` comments, `export ` prefixes and single or double quotes allowed. */
export function parseEnvValue(text: string, name: string): string | undefined {
  let found: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match || match[1] !== name) continue;
    let value = match[2] ?? "";
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.endsWith(quote) && value.length >= 2) {
      value = value.slice(1, -1);
    } else {
      value = value.replace(/\s+#.*$/, "");
    }
    found = value; // the last assignment wins, as in a shell
  }
  return found;
}

/** Development secrets from the project's `.env.local`; other environments get nothing. */
export function envLocalSecrets(projectDir: string): SecretResolver {
  const file = join(projectDir, "opencomputer", ".env.local");
  return {
    async resolve(environment, name) {
      if (environment !== "development" || !existsSync(file)) return undefined;
      const value = parseEnvValue(readFileSync(file, "utf8"), name);
      return value === "" ? undefined : value;
    },
  };
}

/** The first source that has the name wins (the store before `.env.local`). */
export function layeredSecrets(...sources: SecretResolver[]): SecretResolver {
  return {
    async resolve(environment, name) {
      for (const source of sources) {
        const value = await source.resolve(environment, name);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
}
