import { dirname } from "node:path";
import type { AgentFunction, Memory } from "@opencomputer/agent";
import { memoryDeclaration } from "@opencomputer/agent/internal";
import type { AgentResolver } from "../ports/agent-resolver.ts";
import type { AgentResources } from "../ports/agent-resources.ts";
import { MODULE_LOADER } from "./module-loader.ts";
import { AgentNotFoundError, parseAgentRef } from "./source-agents.ts";

export interface StaticAgentsOptions {
  /** Where scripts (`opencomputer/scripts`) and other project files live. */
  projectDir: string;
  agents: Record<string, AgentFunction>;
  /** The deployment id sessions pin (default `static`). */
  deploymentId?: string;
  /**
   * Where a worker process finds each agent: a module exporting it under the agent's id. Without
   * it the agents exist only as functions in this process and cannot run in workers.
   */
  modules?: Record<string, string>;
  /** The memory resources each agent's deployment declares (`defineMemory` results). */
  memory?: Record<string, readonly Memory[]>;
  /** Each agent's MCP servers and skills, as a deployment would declare them. */
  resources?: Record<string, AgentResources>;
}

/** Agents given as functions: for embedding the runtime in an application, and for tests. */
export function createStaticAgents(options: StaticAgentsOptions): AgentResolver {
  const deploymentId = options.deploymentId ?? "static";
  const find = (agentId: string): AgentFunction => {
    const fn = options.agents[agentId];
    if (!fn) {
      throw new AgentNotFoundError(
        "agent_not_found",
        `No agent "${agentId}"; known: ${Object.keys(options.agents).join(", ")}`,
        {
          path: "agentId",
        },
      );
    }
    return fn;
  };
  return {
    async describe(agentRef) {
      const { agentId } = parseAgentRef(agentRef);
      find(agentId);
      return { agentId, deploymentId };
    },
    async memory(agentId) {
      return (options.memory?.[agentId] ?? []).map(memoryDeclaration);
    },
    async load(agentId) {
      return { agentId, deploymentId, projectDir: options.projectDir, render: find(agentId) };
    },
    async resources(agentId) {
      return options.resources?.[agentId] ?? {};
    },
    async locate(agentId) {
      const file = options.modules?.[agentId];
      if (!file) {
        throw new AgentNotFoundError(
          "agent_not_locatable",
          `Agent "${agentId}" is a function of this process; give its module in \`modules\` to run it in a worker`,
          { path: "agentId" },
        );
      }
      return {
        agentId,
        deploymentId,
        projectDir: options.projectDir,
        cwd: dirname(file),
        loader: MODULE_LOADER,
        args: { file, exportName: agentId },
        readPaths: [dirname(file)],
      };
    },
  };
}
