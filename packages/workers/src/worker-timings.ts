// How long a worker may take for each thing it does, and how long it may be quiet.

export interface WorkerTimings {
  /** How often the worker reports it is alive (default 500 ms). */
  heartbeatMs: number;
  /** Silence after which the worker counts as hung and is killed (default 10 s). */
  heartbeatTimeoutMs: number;
  /** Longest a render may take (default 10 s); renders are synchronous, so this is generous. */
  renderDeadlineMs: number;
  /** Longest a run / preview / apply may take before the worker is replaced (default 15 min). */
  callDeadlineMs: number;
  /** Longest starting Node and loading the deployment may take (default 30 s). */
  startTimeoutMs: number;
  /** A worker with no call for this long is stopped; the next call starts another (10 min). */
  idleMs: number;
}

export const DEFAULT_TIMINGS: WorkerTimings = {
  heartbeatMs: 500,
  heartbeatTimeoutMs: 10_000,
  renderDeadlineMs: 10_000,
  callDeadlineMs: 15 * 60_000,
  startTimeoutMs: 30_000,
  idleMs: 10 * 60_000,
};

/** The reason a worker stopped for being idle: not a loss worth a warning. */
export const IDLE_REASON = "was stopped: idle";
