import { readFileSync } from "node:fs";

/** Identity of a host process: pid alone is reused, pid plus start time is not. */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

function readStat(pid: number): { state: string; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name may contain spaces and parentheses; fields resume after the last ')'.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const startTime = fields[19];
  if (state === undefined || startTime === undefined) return undefined;
  return { state, startTime };
}

export function identify(pid: number): ProcessIdentity | undefined {
  const stat = readStat(pid);
  return stat ? { pid, startTime: stat.startTime } : undefined;
}

/**
 * True once the process has exited. A zombie counts: when a PID namespace's init becomes a
 * zombie the kernel has already killed and reaped every other process in that namespace.
 */
export function hasExited(process: ProcessIdentity): boolean {
  const stat = readStat(process.pid);
  if (!stat) return true;
  if (stat.startTime !== process.startTime) return true;
  return stat.state === "Z" || stat.state === "X";
}

/** Polls until the process has exited or the deadline passes; resolves whether it exited. */
export async function waitForExit(process: ProcessIdentity, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (hasExited(process)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
