// `createRuntime({ execution })`: where agent code runs. "in-process" (the default, for
// embedding and tests) imports agents into the runtime's process; "worker" runs each deployment
// in its own pool of worker processes, out of reach of the store and the secrets
// (docs/workers.md).

import type { AgentExecution } from "../agents/execution.ts";
import { createInProcessExecution } from "../agents/in-process.ts";
import { locatedAgents } from "../agents/located.ts";
import type { AgentResolver } from "../agents/resolver.ts";
import type { Logger } from "../engine/context.ts";
import { createWorkerExecution, type WorkerExecutionOptions } from "./worker-execution.ts";

export type ExecutionOption = "in-process" | "worker" | AgentExecution;
export type WorkerSettings = Omit<WorkerExecutionOptions, "agents" | "log">;

/** The execution to use, the resolver the engine loads through, and whether the runtime owns it. */
export function resolveExecution(
  option: ExecutionOption | undefined,
  agents: AgentResolver,
  settings: WorkerSettings | undefined,
  log: Logger,
): { execution: AgentExecution; agents: AgentResolver; owned: boolean } {
  if (option === undefined || option === "in-process") {
    return { execution: createInProcessExecution(agents), agents, owned: true };
  }
  if (option === "worker") {
    return {
      execution: createWorkerExecution({ ...settings, agents, log }),
      agents: locatedAgents(agents),
      owned: true,
    };
  }
  return {
    execution: option,
    agents: option.kind === "worker" ? locatedAgents(agents) : agents,
    owned: false,
  };
}
