// `opencomputer rollback <agent>`: moves an alias (production unless --alias says otherwise)
// back on the server, to --to <deploymentId> or to what it named before its latest move.

import { resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { isAlias } from "@opencomputer/build";
import { json, need, noExtra, out, parse } from "../args.ts";
import { ApiClient, seg } from "../client.ts";

export const ROLLBACK_USAGE = `opencomputer rollback <agent> [--to <deploymentId>] [--alias production|development] [--dir DIR] [--json]
  e.g.  opencomputer rollback support
        opencomputer rollback support --to dep_0123456789abcdef0123`;

export async function rollbackCommand(argv: string[]): Promise<number> {
  const options = {
    to: { type: "string" },
    alias: { type: "string" },
    dir: { type: "string" },
    json: { type: "boolean" },
  } as const;
  const { values, positionals } = parse(argv, options, ROLLBACK_USAGE);
  const agentId = need(positionals, 0, "the agent id", ROLLBACK_USAGE);
  noExtra(positionals, 1, ROLLBACK_USAGE);
  const alias = values.alias ?? "production";
  if (!isAlias(alias)) {
    throw new OpenComputerError(
      "usage",
      `--alias must be development or production, got "${alias}"`,
    );
  }
  const api = ApiClient.resolve(resolve(values.dir ?? "."));
  const { agent } = await api.post<{
    agent: { aliases: Record<string, string | null>; history: { previous: string | null }[] };
  }>(`/agents/${seg(agentId)}/rollback`, { alias, ...(values.to ? { to: values.to } : {}) });
  if (values.json) json(agent);
  else {
    const from = agent.history.at(-1)?.previous ?? "nothing";
    out(`${agentId}@${alias} → ${agent.aliases[alias]} (was ${from})`);
  }
  return 0;
}
