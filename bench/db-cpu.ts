// CPU time of one PostgreSQL cluster on this machine: its postmaster and every process it
// started (backends, WAL writer, checkpointer, ...), from /proc. Other clusters on the machine
// (other test runs) are not counted. Linux only; elsewhere it reads 0.
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";

const TICK_MS = 10; // USER_HZ is 100 on Linux

function stat(pid: string): { ppid: string; cpuMs: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // Fields 4 (ppid), 14 (utime) and 15 (stime), counted from 1.
    return { ppid: f[1]!, cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS };
  } catch {
    return null;
  }
}

/** The cluster's CPU time (ms) since its processes started: in all, and per process id. */
export interface ClusterCpuSample {
  totalMs: number;
  byPid: Map<string, number>;
}

/** A reader of the cluster's CPU time. */
export async function clusterCpu(url: string): Promise<() => ClusterCpuSample> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  let postmaster: string | undefined;
  try {
    const { rows } = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    // Read while the backend still runs: it exits with the connection.
    postmaster = stat(String(rows[0]!.pid))?.ppid;
  } finally {
    await db.end();
  }
  return () => {
    const byPid = new Map<string, number>();
    if (postmaster === undefined) return { totalMs: 0, byPid };
    byPid.set(postmaster, stat(postmaster)?.cpuMs ?? 0);
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      const s = stat(pid);
      if (s?.ppid === postmaster) byPid.set(pid, s.cpuMs);
    }
    let totalMs = 0;
    for (const cpuMs of byPid.values()) totalMs += cpuMs;
    return { totalMs, byPid };
  };
}

/**
 * The most CPU time one process of the cluster used between two samples, ms: a backend that
 * used a whole core's worth of the window could not answer faster. A process that started in
 * between counts from zero.
 */
export function busiestMs(before: ClusterCpuSample, after: ClusterCpuSample): number {
  let most = 0;
  for (const [pid, cpuMs] of after.byPid)
    most = Math.max(most, cpuMs - (before.byPid.get(pid) ?? 0));
  return most;
}
