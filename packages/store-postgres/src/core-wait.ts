// Whether the calling thread is short of CPU: the share of the last window it spent runnable
// but waiting for a core, from the kernel's scheduler statistics (`/proc/thread-self/schedstat`:
// time on a CPU, time waiting on a run queue, both in ns, and the number of time slices).
//
// pipeline.ts reads it once per tick to size its Sync groups. A thread that waits for a core
// shares it with busy processes (several runtimes and their backends on few cores), so no core
// sits idle while the runtime waits for a bigger group's answers, and fewer commits leave more
// CPU to everyone. A thread that gets a core when it wants one is itself the limit, and the
// backend should run the next group while it reads the last. Its own waits for the database do
// not count: a thread that sleeps on a socket is not runnable, so a bigger group cannot make the
// gauge read "short" by slowing the runtime down.

import { readFileSync } from "node:fs";

export interface CoreWaitOptions {
  /** The schedstat line; throws where there is none (not Linux), which disables the gauge. */
  read?: () => string;
  /** A monotonic clock in ms (default `performance.now`). */
  now?: () => number;
  /** The shortest window a reading covers, ms (default 50). */
  windowMs?: number;
  /** The share of the window spent waiting for a core from which the thread is short (0.5). */
  threshold?: number;
}

/** The gauge the pipeline asks; a test may pass its own. */
export interface CoreGauge {
  short(): boolean;
}

export class CoreWait implements CoreGauge {
  private readonly read: () => string;
  private readonly now: () => number;
  private readonly windowMs: number;
  private readonly threshold: number;
  private available = true;
  private at: number;
  private waitedNs: number;
  private last = false;

  constructor(options: CoreWaitOptions = {}) {
    this.read = options.read ?? (() => readFileSync("/proc/thread-self/schedstat", "utf8"));
    this.now = options.now ?? (() => performance.now());
    this.windowMs = options.windowMs ?? 50;
    this.threshold = options.threshold ?? 0.5;
    this.at = this.now();
    this.waitedNs = this.sample() ?? 0;
  }

  /**
   * Whether the thread waited for a core for at least `threshold` of the time since the last
   * reading. Read again only once `windowMs` has passed, so a busy thread pays a file read about
   * twenty times a second and an idle one nothing.
   */
  short(): boolean {
    if (!this.available) return false;
    const now = this.now();
    const elapsed = now - this.at;
    if (elapsed < this.windowMs) return this.last;
    const waitedNs = this.sample();
    if (waitedNs === undefined) return false;
    this.last = (waitedNs - this.waitedNs) / 1e6 >= this.threshold * elapsed;
    this.at = now;
    this.waitedNs = waitedNs;
    return this.last;
  }

  /** The run-queue wait so far in ns, or undefined (and the gauge off) when unreadable. */
  private sample(): number | undefined {
    try {
      const waited = Number(this.read().split(" ")[1]);
      if (Number.isFinite(waited)) return waited;
    } catch {
      // No schedstat here: the pipeline keeps its one-core group size.
    }
    this.available = false;
    return undefined;
  }
}

let threadGauge: CoreWait | undefined;

/** This thread's gauge, made on first use (each thread has its own module instance). */
export function threadCoreWait(): CoreWait {
  threadGauge ??= new CoreWait();
  return threadGauge;
}
