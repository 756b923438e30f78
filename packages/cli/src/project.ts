import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";

/** The agent ids of a project: directories of `opencomputer/agents` holding an `agent.ts`. */
export function listAgents(projectDir: string): string[] {
  const root = join(projectDir, "opencomputer", "agents");
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, "agent.ts")))
    .map((d) => d.name)
    .sort();
}

/** The agent to use: the one named, or the project's only agent. */
export function chooseAgent(projectDir: string, requested: string | undefined): string {
  if (requested) return requested;
  const agents = listAgents(projectDir);
  if (agents.length === 1) return agents[0]!;
  if (agents.length === 0) {
    throw new OpenComputerError(
      "usage",
      `No agents in ${join(projectDir, "opencomputer", "agents")}; pass --dir to a project`,
    );
  }
  throw new OpenComputerError(
    "usage",
    `Several agents (${agents.join(", ")}); choose one with --agent`,
  );
}
