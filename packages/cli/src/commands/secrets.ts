// `opencomputer secrets set|list|remove NAME [--environment E] [--dir DIR]`. Secrets are
// write-only: `set` reads the value from stdin (or a prompt that does not echo it), `list`
// shows names, dates and origin bindings, and nothing ever prints a value. They live encrypted
// in `.opencomputer/secrets.json` under the key in `.opencomputer/secret.key`. `set --origin`
// (repeatable) binds a secret to the origins the gateway may send it to; `--any-origin` unbinds
// it; without either, a new value keeps the secret's binding (see docs/connections.md).

import { resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { FileSecretStore, normalizeOrigins, projectSecretPaths } from "@opencomputer/connections";
import { parse } from "../args.ts";
import { readHidden } from "../hidden-input.ts";

const USAGE =
  "secrets set NAME [--origin https://host ...] [--any-origin] | secrets list [--json] | secrets remove NAME   [--environment development|production] [--dir DIR]";

export interface SecretsIO {
  stdin: NodeJS.ReadStream | NodeJS.ReadableStream;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export async function secretsCommand(
  argv: string[],
  io: SecretsIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parse(rest, OPTIONS, USAGE);
  const environment = values.environment ?? "development";
  const store = new FileSecretStore(projectSecretPaths(resolve(values.dir ?? ".")));
  const name = positionals[0];
  switch (action) {
    case "set": {
      if (!name) throw new OpenComputerError("usage", USAGE);
      const origins = bindingOf(values);
      const value = await readHidden(io, `Value for ${name}`);
      const set = await store.set(environment, name, value, origins ? { origins } : {});
      io.stdout.write(
        `${set.created ? "set" : "updated"} ${name} (${environment}), ${describeBinding(set.origins)}\n`,
      );
      return 0;
    }
    case "list": {
      const secrets = await store.list(environment);
      if (values.json) io.stdout.write(`${JSON.stringify(secrets)}\n`);
      else if (secrets.length === 0) io.stderr.write(`no ${environment} secrets\n`);
      else
        for (const s of secrets)
          io.stdout.write(
            `${s.name}\t${s.environment}\t${s.createdAt}\t${s.updatedAt}\t${describeBinding(s.origins)}\n`,
          );
      return 0;
    }
    case "remove": {
      if (!name) throw new OpenComputerError("usage", USAGE);
      const removed = await store.remove(environment, name);
      if (!removed) {
        io.stderr.write(`no secret ${name} in ${environment}\n`);
        return 1;
      }
      io.stdout.write(`removed ${name} (${environment})\n`);
      return 0;
    }
    default:
      throw new OpenComputerError("usage", USAGE);
  }
}

const OPTIONS = {
  dir: { type: "string" },
  environment: { type: "string", short: "e" },
  json: { type: "boolean" },
  origin: { type: "string", multiple: true },
  "any-origin": { type: "boolean" },
} as const;

/** The origins to bind (`[]` with --any-origin), or undefined to keep the current binding. */
function bindingOf(
  values: ReturnType<typeof parse<typeof OPTIONS>>["values"],
): string[] | undefined {
  const origins = values.origin;
  if (values["any-origin"]) {
    if (origins?.length) {
      throw new OpenComputerError(
        "usage",
        "--any-origin unbinds the secret; it cannot be combined with --origin",
        { path: "origin" },
      );
    }
    return [];
  }
  // Checked before the value is read: a typo in an origin should not cost typing the secret.
  return origins?.length ? normalizeOrigins(origins) : undefined;
}

function describeBinding(origins: readonly string[]): string {
  return origins.length > 0 ? `only to ${origins.join(" ")}` : "any origin";
}
