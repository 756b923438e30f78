// The worker processes of one deployment (and execution mode). A call may go to any of them:
// it names its render, and a worker that does not keep that render renders it again from the
// request. One worker would let a tool that blocks its event loop stall every other session of
// the deployment, so the pool grows when every worker is busy, up to `maxWorkers`, and shrinks
// as workers stop when idle or are lost.
// Tool calls of one session that overlap (a step's parallel calls) go to the same worker, so they
// share module state as they did with one worker per deployment: calls that coordinate in
// memory still meet.

import { OpenComputerError } from "@opencomputer/agent";
import { WorkerLostError } from "../agents/execution.ts";
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

export class WorkerPool {
  // Live workers (starting or ready) and the calls each has in flight, oldest first.
  private readonly load = new Map<WorkerProcess, number>();
  /** The worker of each session with a call in flight, and how many it has there. */
  private readonly sessions = new Map<string, { worker: WorkerProcess; calls: number }>();
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

  /**
   * Runs `call` on the worker the growth rule picks, counting it in flight until it settles. A
   * worker that fails to start fails its calls with WorkerLostError: the turn is resumed, as
   * after any loss.
   */
  async use<T>(call: (worker: WorkerProcess) => Promise<T>, sessionId?: string): Promise<T> {
    if (this.stopped) throw new WorkerLostError("The runtime is closing");
    let session = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (session?.worker.lost) session = undefined;
    const worker = session?.worker ?? this.pick();
    if (session) session.calls++;
    else if (sessionId !== undefined) {
      session = { worker, calls: 1 };
      this.sessions.set(sessionId, session);
    }
    // Counted before any await, so calls arriving together see each other and spread out.
    this.load.set(worker, (this.load.get(worker) ?? 0) + 1);
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
      const calls = this.load.get(worker);
      if (calls !== undefined) this.load.set(worker, calls - 1);
      // Forgotten with its last call, so the map holds only sessions with calls in flight.
      if (session && --session.calls === 0 && sessionId !== undefined) {
        if (this.sessions.get(sessionId) === session) this.sessions.delete(sessionId);
      }
    }
  }

  stop(reason: string): void {
    this.stopped = true;
    for (const worker of [...this.load.keys()]) worker.kill(reason);
    this.load.clear();
    this.sessions.clear();
  }

  /**
   * The live worker with the fewest calls in flight; a new one when all have a call (one of
   * them may be blocked in a synchronous loop, and nothing tells which) and the pool may grow.
   * Ties go to the oldest worker, so a quiet deployment keeps using one worker and the others
   * reach their idle stop.
   */
  private pick(): WorkerProcess {
    let best: WorkerProcess | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    let live = 0;
    for (const [worker, calls] of this.load) {
      if (worker.lost) {
        this.load.delete(worker);
        continue;
      }
      live++;
      if (calls < fewest) {
        best = worker;
        fewest = calls;
      }
    }
    if (best && (fewest === 0 || live >= this.maxWorkers)) return best;
    return this.spawn();
  }

  private spawn(): WorkerProcess {
    const options = this.spawnOptions();
    const worker: WorkerProcess = new WorkerProcess({
      ...options,
      onLost: (reason) => {
        // Its open calls already failed with WorkerLostError; the next call that needs a
        // worker starts a replacement.
        this.load.delete(worker);
        options.onLost?.(reason);
      },
    });
    this.load.set(worker, 0);
    return worker;
  }
}
