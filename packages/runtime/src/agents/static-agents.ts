import type { AgentFunction } from "@opencomputer/agent";
import type { AgentResolver } from "./resolver.ts";
import { AgentNotFoundError, parseAgentRef } from "./source-agents.ts";

export interface StaticAgentsOptions {
  /** Where scripts (`opencomputer/scripts`) and other project files live. */
  projectDir: string;
  agents: Record<string, AgentFunction>;
  /** The deployment id sessions pin (default `static`). */
  deploymentId?: string;
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
    async load(agentId) {
      return { agentId, deploymentId, projectDir: options.projectDir, render: find(agentId) };
    },
  };
}
