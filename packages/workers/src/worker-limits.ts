// How much of the host one worker process may take. One tool call once held 3.6 GiB and
// started 300 processes (issue #21): a worker runs an author's code for every session of its
// deployment, so a runaway call must stop at its own worker, not at the host.
// Where each limit is enforced (cgroup, rlimit, V8) depends on the host; docs/workers.md
// ("Resource limits") says which applies when.

import { OpenComputerError } from "@opencomputer/agent";

export interface WorkerLimits {
  /**
   * Memory of the worker and every process it starts, together, in MiB (cgroup memory limit,
   * no swap). The JavaScript heap is capped at 3/4 of it (`--max-old-space-size`), so a heap
   * that grows stops with V8's own error before the kernel has to kill the worker.
   */
  memoryMiB: number;
  /** Processes and threads of the worker at once (cgroup pids; RLIMIT_NPROC in a sandbox). */
  maxTasks: number;
  /** CPU time per wall-clock time, in cores (cgroup CPU quota). */
  cpus: number;
  /** The largest file a worker's process may write, in MiB (RLIMIT_FSIZE). */
  maxFileMiB: number;
  /** Open file descriptors per process (RLIMIT_NOFILE). */
  maxOpenFiles: number;
}

/**
 * Room for a Node worker with a few subprocesses (Node alone runs about a dozen threads), not
 * for a host's worth of memory or processes. Raise them per runtime with `workers.limits`.
 */
export const DEFAULT_WORKER_LIMITS: WorkerLimits = {
  memoryMiB: 1024,
  maxTasks: 256,
  cpus: 1,
  maxFileMiB: 1024,
  maxOpenFiles: 1024,
};

/** Below this Node cannot load tsx and a deployment; a smaller limit would only fail to start. */
const MIN_MEMORY_MIB = 128;
/** Node's own threads (main, V8 platform, libuv pool) need about a dozen tasks. */
const MIN_TASKS = 32;

const RULES: Record<keyof WorkerLimits, { min: number; integer: boolean; what: string }> = {
  memoryMiB: {
    min: MIN_MEMORY_MIB,
    integer: true,
    what: `an integer of at least ${MIN_MEMORY_MIB}`,
  },
  maxTasks: { min: MIN_TASKS, integer: true, what: `an integer of at least ${MIN_TASKS}` },
  cpus: { min: 0.01, integer: false, what: "a number of cores of at least 0.01" },
  maxFileMiB: { min: 1, integer: true, what: "an integer of at least 1" },
  maxOpenFiles: { min: 64, integer: true, what: "an integer of at least 64" },
};

/** `workers.limits` as given, over the defaults; a bad field is refused with its path. */
export function workerLimitsOf(value: unknown): WorkerLimits {
  if (value === undefined) return { ...DEFAULT_WORKER_LIMITS };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new OpenComputerError(
      "invalid_option",
      "workers.limits must be an object such as { memoryMiB: 1024, maxTasks: 256 }",
      { path: "workers.limits" },
    );
  }
  const limits = { ...DEFAULT_WORKER_LIMITS };
  for (const [field, given] of Object.entries(value)) {
    const rule = RULES[field as keyof WorkerLimits];
    if (!rule) {
      throw new OpenComputerError(
        "invalid_option",
        `workers.limits.${field} is not a limit; use ${Object.keys(RULES).join(", ")}`,
        { path: `workers.limits.${field}` },
      );
    }
    if (given === undefined) continue;
    const ok =
      typeof given === "number" &&
      Number.isFinite(given) &&
      given >= rule.min &&
      (!rule.integer || Number.isInteger(given));
    if (!ok) {
      throw new OpenComputerError(
        "invalid_option",
        `workers.limits.${field} must be ${rule.what}; got ${typeof given === "string" ? JSON.stringify(given) : String(given)}`,
        { path: `workers.limits.${field}` },
      );
    }
    limits[field as keyof WorkerLimits] = given;
  }
  return limits;
}

/** The V8 heap limit for a worker's memory limit: 3/4, the rest for Node, buffers and children. */
export function heapMiB(limits: WorkerLimits): number {
  return Math.floor((limits.memoryMiB * 3) / 4);
}

export const MIB = 1024 * 1024;
