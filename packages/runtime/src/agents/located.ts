// In worker mode the control plane must not import an agent's code. The engine still asks its
// resolver to `load` a session's agent before a turn (to fail early on a missing deployment);
// this resolver answers from `locate` instead, and the agent's code loads in the worker.

import { OpenComputerError } from "@opencomputer/agent";
import type { AgentResolver, LoadedAgent } from "../ports/agent-resolver.ts";

export function locatedAgents(agents: AgentResolver): AgentResolver {
  return {
    describe: (ref) => agents.describe(ref),
    locate: agents.locate?.bind(agents),
    ...(agents.memory ? { memory: agents.memory.bind(agents) } : {}),
    resources: agents.resources?.bind(agents),
    async load(agentId, deploymentId): Promise<LoadedAgent> {
      if (!agents.locate) {
        throw new OpenComputerError(
          "deployment_invalid",
          `Deployment ${deploymentId}: this runtime's agents cannot run in workers (the resolver cannot locate them)`,
          { path: "deploymentId" },
        );
      }
      const location = await agents.locate(agentId, deploymentId);
      return {
        agentId,
        deploymentId,
        projectDir: location.projectDir,
        ...(location.defaultTools ? { defaultTools: location.defaultTools } : {}),
        render: () => {
          throw new Error("this agent runs in a worker process; use the engine's AgentExecution");
        },
      };
    },
  };
}
