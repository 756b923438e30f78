// Agent code in worker processes: a pool of workers per deployment and execution mode, its first
// worker started on the first turn that needs it, more started while all are busy, each one
// replaced after it is lost. The control plane never imports the agent's code; it asks the
// resolver where the code is (`locate`) and the worker loads it.

import { tmpdir } from "node:os";
import { OpenComputerError } from "@opencomputer/agent";
import type { AgentExecution, AgentResolver, ExecutionMode, Logger } from "@opencomputer/runtime";
import { WorkerLostError } from "@opencomputer/runtime";
import type { CgroupStatus } from "@opencomputer/sandbox";
import { GatewayBridge } from "./gateway-bridge.ts";
import type { WorkerLauncher } from "./worker-command.ts";
import { WorkerGroups } from "./worker-groups.ts";
import { WorkerHandle } from "./worker-handle.ts";
import { type WorkerLimits, workerLimitsOf } from "./worker-limits.ts";
import { type WorkerNetwork, workerNetworkOf } from "./worker-network.ts";
import { maxWorkersOf, WorkerPool } from "./worker-pool.ts";
import type { WorkerProcess } from "./worker-process.ts";
import { DEFAULT_TIMINGS, IDLE_REASON, type WorkerTimings } from "./worker-timings.ts";

export interface WorkerExecutionOptions {
  agents: AgentResolver;
  timings?: Partial<WorkerTimings>;
  /** Variables added to the workers' minimal environment. Never put a secret here. */
  env?: Record<string, string>;
  /**
   * Starts workers inside a sandbox (e.g. `bwrapLauncher()`): every worker then sees only the
   * files it needs, its own pid namespace, and no network but the egress gateway (see
   * `network`). Without it workers are plain processes with a clean environment, and microvm
   * sessions are refused.
   */
  sandbox?: WorkerLauncher;
  /**
   * What a sandboxed worker's network is: `"gateway"` (default; only the egress gateway,
   * through the gateway bridge) or `"host"` (the host's network, for tools that call `fetch()`
   * directly). Microvm sessions always get `"gateway"`.
   */
  network?: WorkerNetwork;
  /** Memory, tasks, CPU, file size and open files per worker (DEFAULT_WORKER_LIMITS). */
  limits?: Partial<WorkerLimits>;
  /**
   * Where the cgroup filesystem is (default /sys/fs/cgroup); `false` runs workers without
   * control groups (then only rlimits and the V8 heap limit bound them).
   */
  cgroupRoot?: string | false;
  /**
   * Most worker processes one deployment (and execution mode) may have at once (default 4). A
   * call that finds every worker busy starts another, so a tool that blocks its worker's event
   * loop holds up only the calls on that worker. An integer of at least 1.
   */
  maxWorkers?: number;
  log?: Logger;
}

/**
 * How a runtime's worker processes are set up (timings, environment, sandbox, limits, pool
 * size): createWorkerExecution's options without the resolver and logger it is given.
 */
export type WorkerPoolOptions = Omit<WorkerExecutionOptions, "agents" | "log">;

/** The whole environment a worker starts with (plus `options.env`): nothing of the control plane's. */
export function workerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: tmpdir(),
    TMPDIR: tmpdir(),
    LANG: "C.UTF-8",
    NODE_ENV: process.env.NODE_ENV === "production" ? "production" : "development",
    ...extra,
  };
}

export function createWorkerExecution(options: WorkerExecutionOptions): AgentExecution & {
  /** The live workers of every pool (starting ones too), for tests and diagnostics. */
  workers(): WorkerProcess[];
  /** Calls waiting for a worker of their pool (every worker holds another session's calls). */
  waiting(): number;
  /** Whether workers get control groups, and where; or why not (once a worker started). */
  cgroups(): CgroupStatus | undefined;
} {
  // Refused here, so that createRuntime throws before it runs anything.
  const maxWorkers = maxWorkersOf(options.maxWorkers);
  const limits = workerLimitsOf(options.limits);
  const network = workerNetworkOf(options.network);
  const timings = { ...DEFAULT_TIMINGS, ...options.timings };
  // Detected with the first worker, not here: a runtime that never starts one probes nothing.
  let groups: WorkerGroups | undefined;
  const handles = new Map<string, Promise<WorkerHandle>>();
  const opened = new Set<WorkerHandle>();
  let closed = false;
  // Made with the first worker without network: the only way out of its empty namespace.
  let bridge: GatewayBridge | undefined;

  async function openHandle(agentId: string, deploymentId: string, mode: ExecutionMode) {
    if (!options.agents.locate) {
      throw new OpenComputerError(
        "deployment_invalid",
        `Deployment ${deploymentId}: this runtime's agents cannot run in workers (the resolver cannot locate them)`,
        { path: "deploymentId" },
      );
    }
    if (mode === "microvm" && !options.sandbox) {
      throw new OpenComputerError(
        "deployment_invalid",
        `Deployment ${deploymentId}: executionMode "microvm" needs a sandbox for its worker, and this runtime has none`,
        { path: "executionMode" },
      );
    }
    const location = await options.agents.locate(agentId, deploymentId);
    // Without a sandbox there is no namespace to leave empty: plain workers use the host's.
    const hostNetwork = !options.sandbox || (network === "host" && mode !== "microvm");
    if (!hostNetwork) bridge ??= new GatewayBridge();
    const workerBridge = hostNetwork ? undefined : bridge;
    groups ??= new WorkerGroups(options.cgroupRoot);
    const workerGroups = groups;
    const pool = new WorkerPool(
      () => ({
        location,
        timings,
        env: workerEnv(options.env),
        ...(options.sandbox ? { launcher: options.sandbox } : {}),
        network: hostNetwork,
        ...(workerBridge ? { bridge: workerBridge } : {}),
        limits,
        groups: workerGroups,
        onLost: (reason: string) => {
          // An idle stop is the pool shrinking, not a loss.
          if (closed || reason === IDLE_REASON) return;
          options.log?.warn("agent worker lost", { agentId, deploymentId, reason });
        },
        onRefused: (what: string) => {
          // Only agent code forging on the channel sends these: worth an operator's look.
          options.log?.warn("agent worker message refused", { agentId, deploymentId, what });
        },
      }),
      maxWorkers,
    );
    await pool.start();
    const handle = new WorkerHandle(location, pool);
    opened.add(handle);
    return handle;
  }

  return {
    kind: "worker",
    open(agentId, deploymentId, mode) {
      if (closed) return Promise.reject(new WorkerLostError("The runtime is closing"));
      const key = `${agentId}\0${deploymentId}\0${mode}`;
      let handle = handles.get(key);
      if (!handle) {
        handle = openHandle(agentId, deploymentId, mode);
        // A deployment that failed to load is tried afresh by the next turn.
        handle.catch(() => handles.delete(key));
        handles.set(key, handle);
      }
      return handle;
    },
    workers() {
      return [...opened].flatMap((h) => h.pool.workers());
    },
    waiting() {
      return [...opened].reduce((sum, h) => sum + h.pool.waiting(), 0);
    },
    cgroups() {
      return groups?.status;
    },
    async close() {
      closed = true;
      await Promise.allSettled(handles.values());
      for (const handle of opened) handle.stop();
      opened.clear();
      handles.clear();
      await bridge?.close();
      await groups?.close();
    },
  };
}
