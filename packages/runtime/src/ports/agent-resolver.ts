import type { AgentFunction, JsonValue } from "@opencomputer/agent";
import type { MemoryDeclaration } from "@opencomputer/agent/internal";
import type { AgentResources } from "./agent-resources.ts";

export interface LoadedAgent {
  agentId: string;
  deploymentId: string;
  /** The user's project directory (scripts, `.env.local`). */
  projectDir: string;
  render: AgentFunction;
  /**
   * Built-in tool ids every render of this agent gets without `useTool` (what its deployment
   * records). Absent: the runtime's `defaultTools` (`shell` where computers are configured).
   */
  defaultTools?: readonly string[];
}

/**
 * How a worker process loads an agent: the control plane never imports the agent's code, it
 * names a loader module that the worker imports and calls with `args`.
 */
export interface AgentLocation {
  agentId: string;
  deploymentId: string;
  projectDir: string;
  /** As `LoadedAgent.defaultTools`. */
  defaultTools?: readonly string[];
  /** The worker's working directory (the deployment's directory). */
  cwd: string;
  /** Absolute path of a module exporting `loadAgent(args): Promise<AgentFunction>`. */
  loader: string;
  args: JsonValue;
  /** What the worker must be able to read; a sandboxed worker sees these read-only, and no more. */
  readPaths: string[];
  /** Paths under `readPaths` a sandboxed worker must not see (the store, keys, secrets). */
  hidePaths?: string[];
}

/** Finds and loads agents. The source loader is the first implementation; deployments come next. */
export interface AgentResolver {
  /** Resolves `<agentId>[@alias]` to the agent and the deployment a new session pins. */
  describe(agentRef: string): Promise<{ agentId: string; deploymentId: string }>;
  /** Imports the agent into this process (in-process execution). */
  load(agentId: string, deploymentId: string): Promise<LoadedAgent>;
  /** Where a worker finds the agent; absent when the agents exist only as functions here. */
  locate?(agentId: string, deploymentId: string): Promise<AgentLocation>;
  /**
   * The memory resources the deployment declares (`defineMemory`), which sessions may bind;
   * absent or empty: none (docs/memory.md).
   */
  memory?(agentId: string, deploymentId: string): Promise<readonly MemoryDeclaration[]>;
  /** The deployment's MCP servers and skills; absent when it has none. */
  resources?(agentId: string, deploymentId: string): Promise<AgentResources>;
}
