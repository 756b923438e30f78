// `opencomputer doctor`: a warning for each connection header that carries a secret without an
// origin binding. Connections are declared by agent code, so an unbound secret goes to any
// origin an agent of the project declares; `secrets set NAME --origin …` limits it to the
// origins an operator names (docs/connections.md). A binding that leaves out the connection's
// own origin is reported too: the gateway will refuse that request. Only the store's names and
// bindings are read, never a value; without a store to look at, one general note is printed.

import { existsSync, readFileSync } from "node:fs";
import type { ConnectionDeclaration } from "@opencomputer/agent/internal";
import {
  FileSecretStore,
  projectSecretPaths,
  SECRET_ENVIRONMENTS,
} from "@opencomputer/connections";
import { connectionModules, loadProjectConnections } from "./connections.ts";
import type { BuildError } from "./errors.ts";
import { buildIsolation } from "./isolation.ts";
import { openProject, type Project, relativePath } from "./project.ts";

/** A header of a connection that sends a secret, found in an agent's connections. */
interface SecretUse {
  agentId: string;
  connection: ConnectionDeclaration;
  header: string;
  secret: string;
}

/** The report for stderr ("" when there is nothing to say). */
export async function secretBindingReport(dir: string): Promise<string> {
  const project = openProject(dir);
  const loaded = await loadProjectConnections(dir, buildIsolation(project.root));
  // Connections that do not load are the build's errors to report, not this check's.
  if (loaded.errors.length > 0) return "";
  const uses = secretUses(loaded.byAgent);
  if (uses.length === 0) return "";
  const paths = projectSecretPaths(project.root);
  if (!existsSync(paths.file)) {
    return "note: no secret store in .opencomputer/ to check; bind each secret a connection uses to the origins that may receive it: `opencomputer secrets set NAME --origin https://…` (docs/connections.md)\n";
  }
  const warnings = await bindingWarnings(project, new FileSecretStore(paths), uses);
  if (warnings.length === 0) return "";
  const lines = warnings.map(
    (w) => `${w.file}:${w.line}:${w.column}: warning ${w.code} ${w.message}`,
  );
  const count = `${warnings.length} secret binding warning${warnings.length === 1 ? "" : "s"}`;
  return `${lines.join("\n")}\n${count}\n`;
}

function secretUses(byAgent: Map<string, ConnectionDeclaration[]>): SecretUse[] {
  const uses: SecretUse[] = [];
  for (const [agentId, connections] of byAgent) {
    for (const connection of connections) {
      for (const [header, value] of Object.entries(connection.headers)) {
        if (typeof value !== "string")
          uses.push({ agentId, connection, header, secret: value.secret });
      }
    }
  }
  return uses;
}

async function bindingWarnings(
  project: Project,
  store: FileSecretStore,
  uses: SecretUse[],
): Promise<BuildError[]> {
  const warnings = new Map<string, BuildError>();
  for (const environment of SECRET_ENVIRONMENTS) {
    const bindings = new Map((await store.list(environment)).map((s) => [s.name, s.origins]));
    for (const { agentId, connection, header, secret } of uses) {
      const origins = bindings.get(secret);
      // A secret not set here sends nothing: egress_secret_missing is the runtime's to report.
      if (!origins || origins.includes(connection.origin)) continue;
      const key = `${connection.id}\0${connection.origin}\0${header}\0${environment}`;
      if (warnings.has(key)) continue;
      const fix = `opencomputer secrets set ${secret} --environment ${environment} --origin ${connection.origin}`;
      const where = `connection "${connection.id}" sends the secret ${secret} (${environment}) in its ${header} header`;
      warnings.set(key, {
        ...declaredAt(project, agentId, connection.id),
        ...(origins.length === 0
          ? {
              code: "secret_origin_unbound",
              message: `${where}, and the secret has no origin binding: any agent of the project could declare a connection to another origin and receive it; bind it with \`${fix}\``,
            }
          : {
              code: "secret_origin_mismatch",
              message: `${where}, but the secret is bound to ${origins.join(" ")} only, so the gateway refuses it there; if it may go there, run \`${fix}\` (listing every origin)`,
            }),
      });
    }
  }
  return [...warnings.values()];
}

/** Where the connection is declared: the module whose source names its id, else the agent's. */
function declaredAt(project: Project, agentId: string, id: string) {
  const pattern = new RegExp(`\\bid\\s*:\\s*["'\`]${id}["'\`]`);
  for (const file of connectionModules(project, agentId)) {
    const lines = readFileSync(file, "utf8").split("\n");
    const index = lines.findIndex((line) => pattern.test(line));
    if (index !== -1) {
      const column = lines[index]!.search(pattern) + 1;
      return { file: relativePath(project, file), line: index + 1, column };
    }
  }
  return { file: `opencomputer/agents/${agentId}`, line: 1, column: 1 };
}
