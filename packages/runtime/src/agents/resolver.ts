import type { AgentFunction } from "@opencomputer/agent";

export interface LoadedAgent {
  agentId: string;
  deploymentId: string;
  /** The user's project directory (scripts, `.env.local`). */
  projectDir: string;
  render: AgentFunction;
}

/** Finds and loads agents. The source loader is the first implementation; deployments come next. */
export interface AgentResolver {
  /** Resolves `<agentId>[@alias]` to the agent and the deployment a new session pins. */
  describe(agentRef: string): Promise<{ agentId: string; deploymentId: string }>;
  load(agentId: string, deploymentId: string): Promise<LoadedAgent>;
}
