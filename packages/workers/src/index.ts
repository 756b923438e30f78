// Worker processes that run agent code out of the control plane's reach: the runtime's
// AgentExecution port implemented by a pool of child processes per deployment, optionally
// inside bubblewrap (bwrapLauncher), with resource limits and a gateway-only network.
// `createRuntime({ execution: createWorkerExecution({ agents, ... }) })`; docs/workers.md.
export {
  type BwrapLauncherOptions,
  bwrapAvailable,
  bwrapLauncher,
} from "./bwrap-launcher.ts";
export { siblingModule } from "./sibling-module.ts";
export type {
  Admission,
  LaunchContext,
  WorkerCommand,
  WorkerLauncher,
} from "./worker-command.ts";
export {
  createWorkerExecution,
  type WorkerExecutionOptions,
  type WorkerPoolOptions,
  workerEnv,
} from "./worker-execution.ts";
export {
  DEFAULT_WORKER_LIMITS,
  type WorkerLimits,
  workerLimitsOf,
} from "./worker-limits.ts";
export { DEFAULT_WORKER_NETWORK, type WorkerNetwork } from "./worker-network.ts";
export { WorkerProcess } from "./worker-process.ts";
export { DEFAULT_TIMINGS, type WorkerTimings } from "./worker-timings.ts";
