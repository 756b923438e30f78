// How long a commit on this server waits for its WAL flush, timed when the store connects so the
// pipeline's shape (pipeline-size.ts) suits the disk it runs on: the settings say whether a
// commit waits, not whether the wait is 20 microseconds (a disk with a write cache) or 2
// milliseconds. The probe writes one row of `flush_probe` (migration 11), keyed by the backend's
// pid so processes starting together never wait for each other's row lock, and deletes it.
import type pg from "pg";
import { commitsWaitForFlush } from "./pipeline-size.ts";

const INSERT = `INSERT INTO flush_probe (pid) VALUES (pg_backend_pid())
  ON CONFLICT (pid) DO NOTHING`;
const TOUCH = "UPDATE flush_probe SET n = n + 1 WHERE pid = pg_backend_pid()";
const EMPTY = "SELECT 1";
const CLEAN_UP = "DELETE FROM flush_probe WHERE pid = pg_backend_pid()";

export interface FlushProbeOptions {
  /** Commits timed (and as many empty round trips), alternated so drift falls on both. */
  rounds?: number;
  /** The clock, in milliseconds (tests give their own). */
  now?: () => number;
}

/**
 * The flush wait of one commit in milliseconds: 0 when the settings say commits do not wait
 * (fsync or synchronous_commit off), otherwise the lower quartile of small committed writes
 * less that of empty round trips (never below 0). The lower quartile, not the mean: a flush has
 * a floor and a busy machine only adds to it, so it is what a quiet moment shows. `client`
 * must not be inside a transaction.
 */
export async function commitFlushMs(
  client: pg.ClientBase,
  options: FlushProbeOptions = {},
): Promise<number> {
  if (!(await commitsWaitForFlush(client))) return 0;
  const { rounds = 15, now = () => performance.now() } = options;
  const empty: number[] = [];
  const commit: number[] = [];
  const timed = async (sql: string, into: number[]) => {
    const start = now();
    await client.query(sql);
    into.push(now() - start);
  };
  try {
    await client.query(INSERT);
    // The first of each pays for planning: both are left out.
    for (let i = 0; i <= rounds; i++) {
      await timed(EMPTY, empty);
      await timed(TOUCH, commit);
    }
  } finally {
    // Best effort: a failed probe's own error is the one to report, and a row left behind is
    // deleted by the next probe on a backend with the same pid.
    await client.query(CLEAN_UP).catch(() => {});
  }
  return Math.max(0, lowerQuartile(commit.slice(1)) - lowerQuartile(empty.slice(1)));
}

function lowerQuartile(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 2] ?? 0;
}

/**
 * The probe's table: a row per backend probing now; a probe that died half-way leaves its row
 * until a backend with the same pid probes and deletes it.
 */
export const FLUSH_PROBE_V11 = `
CREATE TABLE flush_probe (
  pid integer PRIMARY KEY,
  n bigint NOT NULL DEFAULT 0
);
`;
