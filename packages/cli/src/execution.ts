// Where `opencomputer dev` and `opencomputer server` run agent code: in worker processes, so no
// agent can read the store, the API keys or the secrets the control plane holds. With bubblewrap
// the workers are sandboxed too (own pid namespace, only the deployment and the runtime's code
// readable); microvm sessions need that sandbox.
//
//   OPENCOMPUTER_EXECUTION=worker       (default) worker processes
//   OPENCOMPUTER_EXECUTION=in-process   agent code in the server's own process (debugging only)
//   OPENCOMPUTER_SANDBOX=0              plain worker processes even where bubblewrap exists
//   OPENCOMPUTER_WORKER_NETWORK=gateway (default) sandboxed agent code reaches only the egress
//                                       gateway (connections); =host gives it the host's network
//
// The build loads project code with the same choice (`sandboxUnavailable`, @opencomputer/build).

import { OpenComputerError } from "@opencomputer/agent";
import { agentEnv, sandboxUnavailable } from "@opencomputer/build";
import type { AgentResolver, ExecutionOption, Logger } from "@opencomputer/runtime";
import {
  bwrapLauncher,
  createWorkerExecution,
  type WorkerPoolOptions,
} from "@opencomputer/workers";

export interface ExecutionChoice {
  /** In-process, or worker processes with these settings (started by `startExecution`). */
  options: { execution: "in-process" | "worker"; workers?: WorkerPoolOptions };
  /** One line for the server's start-up banner. */
  description: string;
}

export function cliExecution(
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
): ExecutionChoice {
  const mode = env.OPENCOMPUTER_EXECUTION ?? "worker";
  if (mode === "in-process") {
    return {
      options: { execution: "in-process" },
      description: "agent code in-process (no isolation)",
    };
  }
  if (mode !== "worker") {
    throw new OpenComputerError(
      "usage",
      `OPENCOMPUTER_EXECUTION must be "worker" or "in-process"; got "${mode}"`,
      { path: "OPENCOMPUTER_EXECUTION" },
    );
  }
  const network = networkOf(env);
  const passed = agentEnv(env);
  const extra = Object.keys(passed).length > 0 ? { env: passed } : {};
  const why = sandboxUnavailable(projectDir, env);
  if (why) {
    return {
      options: {
        execution: "worker",
        ...(Object.keys(passed).length > 0 ? { workers: extra } : {}),
      },
      description: `agent code in worker processes (no sandbox: ${why}; host network)`,
    };
  }
  return {
    options: {
      execution: "worker",
      workers: { sandbox: bwrapLauncher(), ...(network === "host" ? { network } : {}), ...extra },
    },
    description:
      network === "host"
        ? "agent code in sandboxed worker processes (bubblewrap; host network, OPENCOMPUTER_WORKER_NETWORK=host)"
        : "agent code in sandboxed worker processes (bubblewrap; network: the egress gateway only)",
  };
}

/** The sandboxed workers' network: only the egress gateway unless the operator asks for more. */
function networkOf(env: NodeJS.ProcessEnv): "gateway" | "host" {
  const value = env.OPENCOMPUTER_WORKER_NETWORK ?? "gateway";
  if (value === "gateway" || value === "host") return value;
  throw new OpenComputerError(
    "usage",
    `OPENCOMPUTER_WORKER_NETWORK must be "gateway" (agent code reaches only connections) or "host" (the host's network); got "${value}"`,
    { path: "OPENCOMPUTER_WORKER_NETWORK" },
  );
}

/** The runtime's `execution` for a choice; `close` stops its worker processes (after the runtime). */
export function startExecution(
  choice: ExecutionChoice,
  agents: AgentResolver,
  log?: Logger,
): { execution: ExecutionOption; close(): Promise<void> } {
  if (choice.options.execution === "in-process") {
    return { execution: "in-process", close: async () => {} };
  }
  const workers = createWorkerExecution({
    ...choice.options.workers,
    agents,
    ...(log ? { log } : {}),
  });
  return { execution: workers, close: () => workers.close() };
}
