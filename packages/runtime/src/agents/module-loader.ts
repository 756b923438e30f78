// Imported inside a worker process (AgentLocation.loader) for agents that are plain modules:
// source agents (`agent.ts`, default export) and static agents given by file.

import { fileURLToPath, pathToFileURL } from "node:url";
import { type AgentFunction, OpenComputerError } from "@opencomputer/agent";

export interface ModuleLoaderArgs {
  file: string;
  /** The export holding the agent function (`default` for agent.ts). */
  exportName: string;
}

export async function loadAgent(args: ModuleLoaderArgs): Promise<AgentFunction> {
  const mod = (await import(pathToFileURL(args.file).href)) as Record<string, unknown>;
  const fn = mod[args.exportName];
  if (typeof fn !== "function") {
    throw new OpenComputerError(
      "deployment_invalid",
      `${args.file} must export the agent function as ${args.exportName === "default" ? "its default export" : `"${args.exportName}"`}`,
      { path: args.file },
    );
  }
  return fn as AgentFunction;
}

/** This file, as a worker imports it. */
export const MODULE_LOADER = fileURLToPath(import.meta.url);
