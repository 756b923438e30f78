// How many pipelined connections the store uses, and how many statements one carries in flight
// before the next is used. Which shape is faster depends on how long a commit waits for its WAL
// to reach the disk, so each field not given is chosen when the store connects: from the
// server's settings, and when commits wait for a flush, from timing a few of them
// (docs/scale-out.md, "Pipelined connections").
import type pg from "pg";

export interface PipelineSize {
  /** Connections to spread the statements over at most. */
  connections: number;
  /** A connection takes more statements while fewer than this many are in flight on it. */
  fill: number;
}

/**
 * Commits return without waiting for the disk (fsync or synchronous_commit off), or the flush
 * is quick: one busy backend answers the whole pipeline with the least CPU, since two half-idle
 * ones each sleep and wake between batches (a second connection only past 32 in flight).
 */
export const ONE_BUSY_CONNECTION: PipelineSize = { connections: 2, fill: 32 };

/**
 * Every commit waits for a slow WAL flush, and a backend answers nothing else meanwhile: on one
 * connection the commits of concurrent sessions would each wait for their own flush in turn.
 * Spread over backends, their commits are flushed together (PostgreSQL's group commit).
 */
export const SPREAD_FOR_FLUSHES: PipelineSize = { connections: 8, fill: 2 };

/**
 * A commit's flush below this many milliseconds (as flush-probe.ts times it) leaves one busy
 * connection the faster shape. On the benchmark machine, with flushes lengthened by
 * `commit_delay`: one connection ran a fifth to a third more turns per second where the probe
 * read 0.11–0.24 ms, as many at 0.30–0.35 ms, and a fifth to a third fewer at 0.36–0.43 ms. The
 * line sits below the level point, on the side where a wrong guess costs less
 * (docs/performance.md).
 */
export const QUICK_FLUSH_MS = 0.25;

const LIMITS = { connections: 64, fill: 1024 } as const;

/** Refuses a size no pipeline can have, naming the option at fault. */
export function checkPipelineSize(given: Partial<PipelineSize>): void {
  for (const key of ["connections", "fill"] as const) {
    const value = given[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1 || value > LIMITS[key]) {
      throw new RangeError(
        `pipeline.${key} must be a whole number from 1 to ${LIMITS[key]}; got ${String(value)}.`,
      );
    }
  }
}

/** Whether a commit on this connection waits for its WAL to be flushed to disk. */
export async function commitsWaitForFlush(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ fsync: string; sync: string }>(
    "SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
  );
  // Every synchronous_commit level but `off` waits at least for the local flush.
  return rows[0]?.fsync === "on" && rows[0]?.sync !== "off";
}

/**
 * The given fields, the others from the shape that suits the server's commits: `flushMs` is how
 * long a commit waits for its WAL flush (0 when it does not wait; see `commitFlushMs`).
 */
export function pipelineSize(given: Partial<PipelineSize>, flushMs: number): PipelineSize {
  const base = flushMs < QUICK_FLUSH_MS ? ONE_BUSY_CONNECTION : SPREAD_FOR_FLUSHES;
  return { connections: given.connections ?? base.connections, fill: given.fill ?? base.fill };
}
