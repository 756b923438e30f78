// Where things are in a user's project, and the agents it declares.

import { existsSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { BuildError } from "./errors.ts";

/** The agent id grammar the runtime accepts (`parseAgentRef`). */
export const AGENT_ID_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export interface Project {
  /** Absolute project directory. */
  root: string;
  /** `<root>/opencomputer/agents`. */
  agentsDir: string;
}

export interface AgentEntry {
  agentId: string;
  /** Absolute `opencomputer/agents/<id>` directory. */
  dir: string;
  /** Absolute path of its `agent.ts`. */
  file: string;
}

export function openProject(dir: string): Project {
  const root = resolve(dir);
  return { root, agentsDir: join(root, "opencomputer", "agents") };
}

/** The deployments live beside the embedded store, in the gitignored `.opencomputer`. */
export function deploymentsDir(root: string): string {
  return join(resolve(root), ".opencomputer", "deployments");
}

/** Project-relative path with `/` separators: stable across machines, used in errors and ids. */
export function relativePath(project: Project, file: string): string {
  const rel = relative(project.root, file);
  return sep === "/" ? rel : rel.split(sep).join("/");
}

export function isInside(dir: string, file: string): boolean {
  const rel = relative(dir, file);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Every `opencomputer/agents/<id>/agent.ts`, sorted by id, plus errors for what is not one. */
export function findAgents(project: Project): { agents: AgentEntry[]; errors: BuildError[] } {
  const agents: AgentEntry[] = [];
  const errors: BuildError[] = [];
  const names = existsSync(project.agentsDir) ? readdirSync(project.agentsDir).sort() : [];
  for (const name of names) {
    const dir = join(project.agentsDir, name);
    const file = join(dir, "agent.ts");
    if (!statSync(dir).isDirectory() || !existsSync(file)) continue;
    if (!AGENT_ID_PATTERN.test(name)) {
      errors.push({
        code: "agent_id_invalid",
        message: `Agent directory "${name}" is not a valid agent id (${AGENT_ID_PATTERN}); rename the directory`,
        file: relativePath(project, file),
        line: 1,
        column: 1,
      });
      continue;
    }
    agents.push({ agentId: name, dir, file });
  }
  if (agents.length === 0 && errors.length === 0) {
    errors.push({
      code: "agent_not_found",
      message: `No agents in ${project.root}: create opencomputer/agents/<agentId>/agent.ts with a default export`,
      file: "opencomputer/agents",
      line: 1,
      column: 1,
    });
  }
  return { agents, errors };
}
