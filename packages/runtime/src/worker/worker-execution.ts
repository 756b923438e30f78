// Agent code in worker processes: a pool of workers per deployment and execution mode, its first
// worker started on the first turn that needs it, more started while all are busy, each one
// replaced after it is lost. The control plane never imports the agent's code; it asks the
// resolver where the code is (`locate`) and the worker loads it.

import { tmpdir } from "node:os";
import { OpenComputerError } from "@opencomputer/agent";
import type { AgentExecution, ExecutionMode } from "../agents/execution.ts";
import { WorkerLostError } from "../agents/execution.ts";
import type { AgentResolver } from "../agents/resolver.ts";
import type { Logger } from "../engine/context.ts";
import { GatewayBridge } from "./gateway-bridge.ts";
import { WorkerHandle } from "./worker-handle.ts";
import { maxWorkersOf, WorkerPool } from "./worker-pool.ts";
import {
  DEFAULT_TIMINGS,
  IDLE_REASON,
  type WorkerLauncher,
  type WorkerProcess,
  type WorkerTimings,
} from "./worker-process.ts";

export interface WorkerExecutionOptions {
  agents: AgentResolver;
  timings?: Partial<WorkerTimings>;
  /** Variables added to the workers' minimal environment. Never put a secret here. */
  env?: Record<string, string>;
  /**
   * Starts workers inside a sandbox (e.g. `bwrapLauncher()`): every worker then sees only the
   * files it needs, its own pid namespace, and (microvm sessions) no network. Without it workers
   * are plain processes with a clean environment, and microvm sessions are refused.
   */
  sandbox?: WorkerLauncher;
  /**
   * Most worker processes one deployment (and execution mode) may have at once (default 4). A
   * call that finds every worker busy starts another, so a tool that blocks its worker's event
   * loop holds up only the calls on that worker. An integer of at least 1.
   */
  maxWorkers?: number;
  log?: Logger;
}

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
} {
  // Refused here, so that createRuntime throws before it runs anything.
  const maxWorkers = maxWorkersOf(options.maxWorkers);
  const timings = { ...DEFAULT_TIMINGS, ...options.timings };
  const handles = new Map<string, Promise<WorkerHandle>>();
  const opened = new Set<WorkerHandle>();
  let closed = false;
  // Made with the first microvm worker: the only way out of its empty network namespace.
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
    if (mode === "microvm") bridge ??= new GatewayBridge();
    const microvmBridge = mode === "microvm" ? bridge : undefined;
    const pool = new WorkerPool(
      () => ({
        location,
        timings,
        env: workerEnv(options.env),
        ...(options.sandbox ? { launcher: options.sandbox } : {}),
        network: mode !== "microvm",
        ...(microvmBridge ? { bridge: microvmBridge } : {}),
        onLost: (reason: string) => {
          // An idle stop is the pool shrinking, not a loss.
          if (closed || reason === IDLE_REASON) return;
          options.log?.warn("agent worker lost", { agentId, deploymentId, reason });
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
    async close() {
      closed = true;
      await Promise.allSettled(handles.values());
      for (const handle of opened) handle.stop();
      opened.clear();
      handles.clear();
      await bridge?.close();
    },
  };
}
