import { join, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { KeyFile } from "@opencomputer/server";
import { parse } from "../args.ts";

/** Where a project's API keys live (hashed): `<dir>/.opencomputer/keys.json`. */
export function keyFilePath(projectDir: string): string {
  return join(resolve(projectDir), ".opencomputer", "keys.json");
}

/**
 * `opencomputer keys create [--name N] [--project P] | list [--json] | revoke <id>` (all take
 * `--dir`). A key sees only its project's sessions; the default project is `default`.
 */
export async function keysCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  const parsed = parse(rest, OPTIONS);
  const file = new KeyFile(keyFilePath(parsed.values.dir ?? "."));
  switch (action) {
    case "create": {
      const { key, stored } = file.create(
        parsed.values.name ?? "default",
        parsed.values.project ?? "default",
      );
      process.stdout.write(`${stored.id}\t${stored.name}\t${stored.projectId}\n${key}\n`);
      process.stderr.write("Keep this key: it is stored hashed and cannot be shown again.\n");
      return 0;
    }
    case "list": {
      const keys = file.list();
      if (parsed.values.json)
        process.stdout.write(`${JSON.stringify(keys.map(({ hash: _h, ...k }) => k))}\n`);
      else
        for (const k of keys)
          process.stdout.write(
            `${k.id}\t${k.name}\t${k.projectId ?? "default"}\t${k.createdAt}\t${k.revokedAt ? `revoked ${k.revokedAt}` : "active"}\n`,
          );
      return 0;
    }
    case "revoke": {
      const id = parsed.positionals[0];
      if (!id) throw new OpenComputerError("usage", "keys revoke <id>");
      const k = file.revoke(id);
      process.stdout.write(`${k.id} revoked\n`);
      return 0;
    }
    default:
      throw new OpenComputerError(
        "usage",
        "keys create [--name N] [--project P] | keys list [--json] | keys revoke <id>",
      );
  }
}

const OPTIONS = {
  dir: { type: "string" },
  name: { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
} as const;
