// The command that starts a worker, and the launcher hook that may wrap it (e.g. in bubblewrap).
// Kept apart from the process bookkeeping so a launcher (and packages/build, which loads modules
// through `bwrapLauncher` at build time) depends on these types only.

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { AgentLocation } from "@opencomputer/runtime";
import { siblingModule } from "./sibling-module.ts";
import type { WorkerLimits } from "./worker-limits.ts";

export const CHILD_SCRIPT = siblingModule(import.meta.url, "child");
export const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

export interface WorkerCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Host uid/gid to start the command as (a root runtime drops privileges for its sandboxes). */
  uid?: number;
  gid?: number;
  /**
   * Set by a launcher that honoured `context.admission`: the sandbox reports its init's host pid
   * on `infoFd` (bwrap's `--info-fd` JSON) and waits for a byte on `blockFd` before running
   * anything, so the worker can be put in its control group before it forks.
   */
  admission?: Admission;
  /** Bytes the spawner must write (then close) on extra pipes, e.g. bwrap's seccomp filter. */
  inputs?: Array<{ fd: number; data: Buffer }>;
}

export interface Admission {
  infoFd: number;
  blockFd: number;
}

export interface LaunchContext {
  location: AgentLocation;
  /** false: no network at all (the default for sandboxed workers, and always for microvm). */
  network: boolean;
  /** Without network: the directory of the gateway bridge's sockets, to bind read-only. */
  bridgeDir?: string;
  /** Limits to apply inside the sandbox as rlimits (process count, file size, open files). */
  limits?: WorkerLimits;
  /** Asked for when the worker gets a control group; see `WorkerCommand.admission`. */
  admission?: Admission;
  /**
   * A pipe the spawner will feed from `WorkerCommand.inputs`: a launcher may read a seccomp
   * filter from it. Without it (a caller that feeds no pipes) no filter is applied.
   */
  seccompFd?: number;
}

/** Turns the plain command into the one that runs, e.g. inside bubblewrap. */
export type WorkerLauncher = (command: WorkerCommand, context: LaunchContext) => WorkerCommand;
