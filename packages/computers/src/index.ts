export {
  BubblewrapMissingError,
  type CgroupStatus,
  discoverSandboxHost,
} from "@opencomputer/sandbox";
export type { SandboxLimits } from "./bwrap-args.ts";
export { BwrapComputer } from "./bwrap-computer.ts";
export {
  BubblewrapComputerProvider,
  type BubblewrapProviderOptions,
  DEFAULT_LIMITS,
  MAX_COMMAND_SECONDS,
} from "./bwrap-provider.ts";
export { type Clock, systemClock } from "./clock.ts";
export type {
  AcquireOptions,
  Computer,
  ComputerProvider,
  LifecycleEvent,
  ReleaseReason,
  RunFailure,
  RunFailureCode,
  RunOptions,
  RunOutcome,
  RunResult,
} from "./computer-provider.ts";
export {
  createShellTools,
  DEFAULT_TIMEOUT_SECONDS,
  MAX_COMMAND_BYTES,
  validateShellInput,
} from "./shell-tool.ts";
