// Memory resources of a deployment: the modules `opencomputer/agents/<id>/memory.ts`,
// `opencomputer/agents/<id>/memory/*.ts` and `opencomputer/memory/*.ts` are loaded (in a child
// process confined as tool modules are) and the `defineMemory` resources they export are
// recorded in the manifest, which is what sessions of the deployment may bind. A definition the
// SDK refuses is an error at its file and line; two declarations of one id must agree.

import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { MemoryDeclaration } from "@opencomputer/agent/internal";
import { canonicalJson } from "@opencomputer/runtime";
import { siblingModule } from "@opencomputer/workers";
import type { BuildError } from "./errors.ts";
import type { BuildIsolation } from "./isolation.ts";
import { startLoadProcess } from "./load-process.ts";
import { openProject, type Project, relativePath } from "./project.ts";

export type MemoryMessage = Array<
  | { file: string; memory: MemoryDeclaration[] }
  | {
      file: string;
      error: { code: string; message: string; path?: string; line: number; column: number };
    }
>;

const CHILD_SCRIPT = siblingModule(import.meta.url, "memory-child");
const MODULE_FILE = /^[^.].*\.(ts|mts|js|mjs)$/;

function modulesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && MODULE_FILE.test(e.name) && !/\.(test|d)\.[mc]?ts$/.test(e.name))
    .map((e) => join(dir, e.name))
    .sort();
}

/** The memory modules an agent's deployment declares resources in. */
export function memoryModules(project: Project, agentId: string): string[] {
  const own = join(project.agentsDir, agentId);
  return [
    ...["memory.ts", "memory.mts", "memory.js"].map((f) => join(own, f)).filter(existsSync),
    ...modulesIn(join(own, "memory")),
    ...modulesIn(join(project.root, "opencomputer", "memory")),
  ];
}

/** Every agent's memory declarations (sorted by id), or the errors that refuse them. */
export async function loadProjectMemory(
  dir: string,
  isolation: BuildIsolation,
  timeoutMs = 30_000,
): Promise<{ byAgent: Map<string, MemoryDeclaration[]>; errors: BuildError[] }> {
  const project = openProject(dir);
  const agentIds = existsSync(project.agentsDir)
    ? readdirSync(project.agentsDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && existsSync(join(project.agentsDir, e.name, "agent.ts")))
        .map((e) => e.name)
    : [];
  const byAgent = new Map<string, MemoryDeclaration[]>();
  const errors: BuildError[] = [];
  const modules = new Map(agentIds.map((id) => [id, memoryModules(project, id)]));
  const files = [...new Set([...modules.values()].flat())];
  if (files.length === 0) return { byAgent, errors };
  const loaded = new Map<string, MemoryDeclaration[]>();
  for (const result of await runChild(project, files, isolation, timeoutMs)) {
    const rel = relativePath(project, result.file);
    if ("error" in result) {
      const { code, message, path, line, column } = result.error;
      errors.push({
        code,
        message: `${rel}:${line}: ${message}${path ? ` (field ${path})` : ""}`,
        file: rel,
        line,
        column,
      });
    } else loaded.set(result.file, result.memory);
  }
  for (const [agentId, agentFiles] of modules) {
    const byId = new Map<string, { declaration: MemoryDeclaration; file: string }>();
    for (const file of agentFiles) {
      for (const declaration of loaded.get(file) ?? []) {
        const first = byId.get(declaration.id);
        if (!first) {
          byId.set(declaration.id, { declaration, file });
          continue;
        }
        if (canonicalJson(first.declaration) === canonicalJson(declaration)) continue;
        const rel = relativePath(project, file);
        errors.push({
          code: "memory_declaration_conflict",
          message: `Agent "${agentId}" declares the memory resource "${declaration.id}" twice, differently (${relativePath(project, first.file)} and ${rel}); declarations of one id must agree on description and provider`,
          file: rel,
          line: 1,
          column: 1,
        });
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
): Promise<MemoryMessage> {
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
    const settle = (answer?: MemoryMessage) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      started.stop();
      resolve(
        answer ??
          files.map((file) => ({
            file,
            error: {
              code: "memory_module_load_failed",
              message: `loading the memory modules failed${stderr ? `: ${stderr.trim()}` : ` (no answer within ${timeoutMs} ms)`}`,
              line: 1,
              column: 1,
            },
          })),
      );
    };
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
    });
    child.on("message", (message) => settle(message as MemoryMessage));
    child.on("error", (error) => {
      stderr ||= error.message;
      settle();
    });
    child.on("exit", () => settle());
    const timer = setTimeout(() => settle(), timeoutMs);
  });
}
