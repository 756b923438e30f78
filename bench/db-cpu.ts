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

/** A reader of the cluster's total CPU time (ms) since its processes started. */
export async function clusterCpu(url: string): Promise<() => number> {
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
    if (postmaster === undefined) return 0;
    let total = stat(postmaster)?.cpuMs ?? 0;
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      const s = stat(pid);
      if (s?.ppid === postmaster) total += s.cpuMs;
    }
    return total;
  };
}
