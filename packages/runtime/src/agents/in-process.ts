// Agent code in the runtime's own process: what embedding and tests use, and what the runtime
// did before workers existed. No isolation: the code shares the control plane's memory and
// environment, so a deployment that must not see secrets runs in workers instead.

import type { AgentExecution, AgentHandle } from "../ports/agent-execution.ts";
import type { AgentResolver, LoadedAgent } from "../ports/agent-resolver.ts";
import { AgentCode } from "./agent-code.ts";

export function createInProcessExecution(agents: AgentResolver): AgentExecution {
  // Resolvers load a deployment once; one AgentCode per loaded agent follows from that.
  const handles = new WeakMap<LoadedAgent, AgentHandle>();
  return {
    kind: "in-process",
    async open(agentId, deploymentId) {
      const agent = await agents.load(agentId, deploymentId);
      let handle = handles.get(agent);
      if (!handle) {
        handle = handleFor(agent);
        handles.set(agent, handle);
      }
      return handle;
    },
    async close() {},
  };
}

function handleFor(agent: LoadedAgent): AgentHandle {
  const code = new AgentCode(agent.render);
  return {
    agentId: agent.agentId,
    deploymentId: agent.deploymentId,
    projectDir: agent.projectDir,
    render: async (request) => code.render(request),
    runTool: (render, tool, request) => code.runTool(render, tool, request),
    previewTool: (render, tool, request) => code.previewTool(render, tool, request),
    applyTool: (render, tool, request) => code.applyTool(render, tool, request),
  };
}
