// Agent code in worker processes: one worker per deployment and execution mode, started on the
// first turn that needs it and replaced after it is lost. The control plane never imports the
// agent's code; it asks the resolver where the code is (`locate`) and the worker loads it.

import { tmpdir } from "node:os";
import { OpenComputerError } from "@opencomputer/agent";
import type {
  AgentExecution,
  AgentHandle,
  ExecutionMode,
  RenderedAgent,
} from "../agents/execution.ts";
import { WorkerLostError } from "../agents/execution.ts";
import type { AgentLocation, AgentResolver } from "../agents/resolver.ts";
import type { Logger } from "../engine/context.ts";
import { GatewayBridge } from "./gateway-bridge.ts";
import {
  DEFAULT_TIMINGS,
  IDLE_REASON,
  type WorkerLauncher,
  WorkerProcess,
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
  /** The live workers, for tests and diagnostics. */
  workers(): WorkerProcess[];
} {
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
    const handle = new WorkerHandle(location, () => ({
      location,
      timings,
      env: workerEnv(options.env),
      ...(options.sandbox ? { launcher: options.sandbox } : {}),
      network: mode !== "microvm",
      ...(microvmBridge ? { bridge: microvmBridge } : {}),
      onLost: (reason: string) => {
        if (closed || reason === IDLE_REASON) return;
        options.log?.warn("agent worker lost", { agentId, deploymentId, reason });
      },
    }));
    await handle.live();
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
      return [...opened].flatMap((h) => (h.current.lost ? [] : [h.current]));
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

/** One deployment's agent code behind a worker that is replaced whenever it is lost. */
class WorkerHandle implements AgentHandle {
  readonly agentId: string;
  readonly deploymentId: string;
  readonly projectDir: string;
  current: WorkerProcess;
  private replacing: Promise<WorkerProcess> | null = null;
  private stopped = false;

  constructor(
    location: AgentLocation,
    private readonly spawnOptions: () => ConstructorParameters<typeof WorkerProcess>[0],
  ) {
    this.agentId = location.agentId;
    this.deploymentId = location.deploymentId;
    this.projectDir = location.projectDir;
    this.current = new WorkerProcess(spawnOptions());
  }

  /** The worker to call: the current one, or its replacement once it was lost. */
  async live(): Promise<WorkerProcess> {
    if (this.stopped) throw new WorkerLostError("The runtime is closing");
    if (!this.current.lost) {
      await this.current.ready;
      return this.current;
    }
    this.replacing ??= (async () => {
      const next = new WorkerProcess(this.spawnOptions());
      this.current = next;
      try {
        await next.ready;
      } catch (error) {
        next.kill("failed to start");
        // Calls see the loss; the turn is resumed (or fails after repeated losses).
        throw new WorkerLostError(
          `The agent's worker could not be replaced: ${(error as Error).message}`,
        );
      } finally {
        this.replacing = null;
      }
      return next;
    })();
    return this.replacing;
  }

  async render(request: RenderedAgent["request"]): Promise<RenderedAgent> {
    return (await this.live()).render(request);
  }

  async runTool(
    render: RenderedAgent,
    tool: string,
    request: Parameters<AgentHandle["runTool"]>[2],
  ) {
    const worker = await this.live();
    return worker.invoke(
      {
        type: "run",
        render: ref(render),
        tool,
        call: {
          input: request.input,
          sessionId: request.sessionId,
          messageId: request.messageId,
          toolCallId: request.toolCallId,
          agentId: request.agentId,
        },
        ...(request.egress ? { egress: request.egress } : {}),
      },
      request.signal,
      request.reportProgress,
    );
  }

  async previewTool(
    render: RenderedAgent,
    tool: string,
    request: Parameters<AgentHandle["previewTool"]>[2],
  ) {
    const worker = await this.live();
    return worker.invoke(
      {
        type: "preview",
        render: ref(render),
        tool,
        input: request.input,
        ...(request.egress ? { egress: request.egress } : {}),
      },
      request.signal,
    );
  }

  async applyTool(
    render: RenderedAgent,
    tool: string,
    request: Parameters<AgentHandle["applyTool"]>[2],
  ) {
    const worker = await this.live();
    return worker.invoke(
      {
        type: "apply",
        render: ref(render),
        tool,
        input: request.input,
        decision: request.decision,
        ...(request.egress ? { egress: request.egress } : {}),
      },
      request.signal,
    );
  }

  stop(): void {
    this.stopped = true;
    this.current.kill("was stopped: the runtime closed");
  }
}

function ref(render: RenderedAgent) {
  return {
    renderId: render.renderId,
    request: { input: render.request.input, builtInToolIds: [...render.request.builtInToolIds] },
  };
}
