// The worker processes of one deployment (and execution mode). A call may go to any of them:
// it names its render, and a worker that does not keep that render renders it again from the
// request. One worker would let a tool that blocks its event loop stall every other session of
// the deployment, so the pool grows when every worker is busy, up to `maxWorkers`, and shrinks
// as workers stop when idle or are lost.
// A worker holds the calls of one owner (a turn: the calls made with one render input) at a
// time. Agent code can reach its worker's IPC channel and see every request sent there, so two
// sessions' calls on one worker could read each other's input and egress token and answer for
// each other; on separate workers they cannot. Calls of the same owner that overlap (a step's
// parallel calls) go to the same worker and share module state, as with one worker per
// deployment. With every worker holding another owner's calls and the pool at `maxWorkers`, a
// call waits for a worker to come free.

import { OpenComputerError } from "@opencomputer/agent";
import { WorkerLostError } from "@opencomputer/runtime";
import { WorkerProcess, type WorkerStart } from "./worker-process.ts";

export const DEFAULT_MAX_WORKERS = 4;

/** `workers.maxWorkers` as given (or the default), refused when it is not an integer ≥ 1. */
export function maxWorkersOf(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_WORKERS;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new OpenComputerError(
      "invalid_option",
      `workers.maxWorkers must be an integer of at least 1; got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`,
      { path: "workers.maxWorkers" },
    );
  }
  return value;
}

interface Load {
  /** Calls in flight (a starting worker's waiting calls included). */
  calls: number;
  /** Whose calls those are; undefined while it has none. */
  owner: unknown;
}

export class WorkerPool {
  // Live workers (starting or ready) and what each holds, oldest first.
  private readonly load = new Map<WorkerProcess, Load>();
  /** Calls waiting for a worker to come free (or be lost, making room for another). */
  private queue: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly spawnOptions: () => WorkerStart,
    private readonly maxWorkers: number,
  ) {}

  /**
   * Starts the first worker and waits until it loaded the deployment: a deployment that cannot
   * load fails here with its own error (deployment_invalid), not as a lost worker.
   */
  async start(): Promise<void> {
    const first = this.spawn();
    try {
      await first.ready;
    } catch (error) {
      first.kill("failed to start");
      throw error;
    }
  }

  /** The workers not lost, including those still starting. */
  workers(): WorkerProcess[] {
    return [...this.load.keys()].filter((w) => !w.lost);
  }

  /** Calls waiting for a worker (diagnostics and tests). */
  waiting(): number {
    return this.queue.length;
  }

  /**
   * Runs `call` on a worker that holds no other owner's calls, counting it in flight until it
   * settles. A worker that fails to start fails its calls with WorkerLostError: the turn is
   * resumed, as after any loss.
   */
  async use<T>(call: (worker: WorkerProcess) => Promise<T>, owner: unknown): Promise<T> {
    let worker = this.claim(owner);
    while (!worker) {
      await new Promise<void>((resolve) => this.queue.push(resolve));
      worker = this.claim(owner);
    }
    try {
      try {
        await worker.ready;
      } catch (error) {
        worker.kill("failed to start");
        throw new WorkerLostError(
          `The agent's worker could not be started: ${(error as Error).message}`,
        );
      }
      return await call(worker);
    } finally {
      const load = this.load.get(worker);
      if (load && --load.calls === 0) {
        load.owner = undefined;
        this.wake();
      }
    }
  }

  stop(reason: string): void {
    this.stopped = true;
    for (const worker of [...this.load.keys()]) worker.kill(reason);
    this.load.clear();
    this.wake();
  }

  /**
   * The worker for a call of `owner`, counted at once (so calls arriving together see each
   * other and spread out), or undefined when it must wait. In order: the worker already holding
   * this owner's calls; the oldest idle worker (so a quiet deployment keeps using one and the
   * others reach their idle stop); a new worker while the pool may grow. A worker with a call in
   * flight may be blocked in a synchronous loop, and nothing tells which, so renders follow the
   * same rule.
   */
  private claim(owner: unknown): WorkerProcess | undefined {
    if (this.stopped) throw new WorkerLostError("The runtime is closing");
    let idle: WorkerProcess | undefined;
    let live = 0;
    for (const [worker, load] of this.load) {
      if (worker.lost) {
        this.load.delete(worker);
        continue;
      }
      live++;
      if (load.calls > 0 && load.owner === owner) return this.count(worker, load, owner);
      if (load.calls === 0) idle ??= worker;
    }
    if (idle) return this.count(idle, this.load.get(idle)!, owner);
    if (live >= this.maxWorkers) return undefined;
    const worker = this.spawn();
    return this.count(worker, this.load.get(worker)!, owner);
  }

  private count(worker: WorkerProcess, load: Load, owner: unknown): WorkerProcess {
    load.calls++;
    load.owner = owner;
    return worker;
  }

  /** Lets every waiting call look again; those that still find no worker wait again, in order. */
  private wake(): void {
    const waiting = this.queue;
    this.queue = [];
    for (const resolve of waiting) resolve();
  }

  private spawn(): WorkerProcess {
    const options = this.spawnOptions();
    const worker: WorkerProcess = new WorkerProcess({
      ...options,
      onLost: (reason) => {
        // Its open calls already failed with WorkerLostError; a waiting call (or the next one)
        // starts a replacement.
        this.load.delete(worker);
        this.wake();
        options.onLost?.(reason);
      },
    });
    this.load.set(worker, { calls: 0, owner: undefined });
    return worker;
  }
}
