// Connections of a deployment: the modules in `opencomputer/agents/<id>/connections/*.ts` and
// `opencomputer/connections/*.ts` are loaded (in a child process confined as tool modules are,
// load-process.ts) and the connections they export are recorded in the manifest — id, origin,
// headers with secret references (names only), methods, pathPrefix — which is all the egress
// gateway allows.

import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { ConnectionDeclaration } from "@opencomputer/agent/internal";
import { siblingModule } from "@opencomputer/workers";
import type { BuildError } from "./errors.ts";
import type { BuildIsolation } from "./isolation.ts";
import { startLoadProcess } from "./load-process.ts";
import { openProject, type Project, relativePath } from "./project.ts";

export type ConnectionsMessage = Array<
  | { file: string; connections: ConnectionDeclaration[] }
  | { file: string; error: { code: string; message: string; path?: string } }
>;

const CHILD_SCRIPT = siblingModule(import.meta.url, "connections-child");
const MODULE_FILE = /^[^.].*\.(ts|mts|js|mjs)$/;

/** The connection modules an agent may use: its own first, then the project's shared ones. */
export function connectionModules(project: Project, agentId: string): string[] {
  const dirs = [
    join(project.agentsDir, agentId, "connections"),
    join(project.root, "opencomputer", "connections"),
  ];
  return dirs.flatMap((dir) =>
    existsSync(dir)
      ? readdirSync(dir, { withFileTypes: true })
          .filter(
            (e) => e.isFile() && MODULE_FILE.test(e.name) && !/\.(test|d)\.[mc]?ts$/.test(e.name),
          )
          .map((e) => join(dir, e.name))
          .sort()
      : [],
  );
}

/** Every agent directory's connections (an agent.ts beside them makes it an agent). */
export function loadProjectConnections(dir: string, isolation: BuildIsolation) {
  const project = openProject(dir);
  const agentIds = existsSync(project.agentsDir)
    ? readdirSync(project.agentsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && existsSync(join(project.agentsDir, e.name, "agent.ts")))
        .map((e) => e.name)
    : [];
  return loadConnections(project, agentIds, isolation);
}

/** Each agent's connections (sorted by id), or the errors that refuse them. */
export async function loadConnections(
  project: Project,
  agentIds: readonly string[],
  isolation: BuildIsolation,
  timeoutMs = 30_000,
): Promise<{ byAgent: Map<string, ConnectionDeclaration[]>; errors: BuildError[] }> {
  const byAgent = new Map<string, ConnectionDeclaration[]>();
  const errors: BuildError[] = [];
  const modules = new Map(agentIds.map((id) => [id, connectionModules(project, id)]));
  const files = [...new Set([...modules.values()].flat())];
  if (files.length === 0) return { byAgent, errors };
  const loaded = new Map<string, ConnectionDeclaration[]>();
  for (const result of await runChild(project, files, isolation, timeoutMs)) {
    const rel = relativePath(project, result.file);
    if ("error" in result) {
      errors.push({
        code: result.error.code,
        message: `${rel}: ${result.error.message}${result.error.path ? ` (field ${result.error.path})` : ""}`,
        file: rel,
        line: 1,
        column: 1,
      });
    } else loaded.set(result.file, result.connections);
  }
  for (const [agentId, agentFiles] of modules) {
    const byId = new Map<string, { declaration: ConnectionDeclaration; file: string }>();
    for (const file of agentFiles) {
      for (const declaration of loaded.get(file) ?? []) {
        const first = byId.get(declaration.id);
        // The agent's own connection overrides a shared one of the same id.
        if (first && isOwn(project, agentId, first.file) && !isOwn(project, agentId, file))
          continue;
        if (first) {
          const rel = relativePath(project, file);
          errors.push({
            code: "connection_id_duplicate",
            message: `Agent "${agentId}" has two connections with the id "${declaration.id}" (${relativePath(project, first.file)} and ${rel}); ids must be unique`,
            file: rel,
            line: 1,
            column: 1,
          });
          continue;
        }
        byId.set(declaration.id, { declaration, file });
      }
    }
    const list = [...byId.values()]
      .map((v) => v.declaration)
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    if (list.length > 0) byAgent.set(agentId, list);
  }
  return { byAgent, errors };
}

function runChild(
  project: Project,
  files: string[],
  isolation: BuildIsolation,
  timeoutMs: number,
): Promise<ConnectionsMessage> {
  return new Promise((resolve) => {
    const started = startLoadProcess(
      project,
      isolation,
      CHILD_SCRIPT,
      [JSON.stringify(files)],
      ["ignore", "ignore", "pipe", "ipc"],
    );
    const { child } = started;
    let stderr = "";
    let settled = false;
    // The answer, an exit, a failure to start or the time limit: whichever comes first ends the
    // child and everything its modules started.
    const settle = (answer?: ConnectionsMessage) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      started.stop();
      resolve(
        answer ??
          files.map((file) => ({
            file,
            error: {
              code: "connection_module_load_failed",
              message: `loading the connection modules failed${stderr ? `: ${stderr.trim()}` : ` (no answer within ${timeoutMs} ms)`}`,
            },
          })),
      );
    };
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
    });
    child.on("message", (message) => settle(message as ConnectionsMessage));
    child.on("error", (error) => {
      stderr ||= error.message;
      settle();
    });
    child.on("exit", () => settle());
    const timer = setTimeout(() => settle(), timeoutMs);
  });
}

function isOwn(project: Project, agentId: string, file: string): boolean {
  return file.startsWith(join(project.agentsDir, agentId, "connections"));
}
