// Who this runtime process is, in a form another process on the same machine can check: the
// machine's boot (a pid means nothing after a reboot), the pid namespace (containers on one
// kernel share the boot id but number processes apart), the pid, and the process's start time
// in clock ticks since boot (a reused pid has a later one). Written into the default runtime id,
// which is what a lease records as its holder, so the check needs no new store column.
import { readFileSync, readlinkSync } from "node:fs";

/** Where and which process: four facts that together name one process incarnation. */
export interface Incarnation {
  /** /proc/sys/kernel/random/boot_id without dashes. */
  bootId: string;
  /** The inode of /proc/self/ns/pid. */
  pidNamespace: string;
  pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot when the process started. */
  startTime: string;
}

/** What a liveness check reads from the machine; injectable so tests need not fake /proc. */
export interface ProcessProbe {
  /** This process's incarnation, or null where /proc cannot say (not Linux). */
  self(): Incarnation | null;
  /** Start time and state (field 3) of `pid` on this machine, or null when there is none. */
  stat(pid: number): { startTime: string; state: string } | null;
}

const SEPARATOR = "@";

/** `<base>@<bootId>:<pidNamespace>:<pid>:<startTime>`: a runtime id another process can judge. */
export function withIncarnation(base: string, incarnation: Incarnation): string {
  const { bootId, pidNamespace, pid, startTime } = incarnation;
  return `${base}${SEPARATOR}${bootId}:${pidNamespace}:${pid}:${startTime}`;
}

/** The incarnation a runtime id names, or null for ids without one (configured, other OS). */
export function parseIncarnation(runtimeId: string): Incarnation | null {
  const at = runtimeId.lastIndexOf(SEPARATOR);
  if (at < 0) return null;
  const parts = runtimeId.slice(at + 1).split(":");
  if (parts.length !== 4) return null;
  const [bootId, pidNamespace, pidText, startTime] = parts as [string, string, string, string];
  const pid = Number(pidText);
  if (!/^[0-9a-f]{32}$/.test(bootId) || !/^\d+$/.test(pidNamespace)) return null;
  if (!Number.isSafeInteger(pid) || pid <= 0 || !/^\d+$/.test(startTime)) return null;
  return { bootId, pidNamespace, pid, startTime };
}

/** Parses /proc/<pid>/stat; the command name (field 2) may hold spaces and parentheses. */
export function parseStat(text: string): { startTime: string; state: string } | null {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // After the name: field 3 (state) is index 0, so field 22 (starttime) is index 19.
  const state = fields[0];
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !/^\d+$/.test(startTime)) return null;
  return { startTime, state };
}

function readStat(pid: number): { startTime: string; state: string } | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}

function readSelf(): Incarnation | null {
  try {
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().replace(/-/g, "");
    const pidNamespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1];
    const stat = readStat(process.pid);
    if (pidNamespace === undefined || stat === null || !/^[0-9a-f]{32}$/.test(bootId)) return null;
    return { bootId, pidNamespace, pid: process.pid, startTime: stat.startTime };
  } catch {
    return null;
  }
}

/** The machine's /proc; self() is read once, as it cannot change while the process lives. */
export function procProbe(): ProcessProbe {
  let self: Incarnation | null | undefined;
  return {
    self: () => {
      if (self === undefined) self = readSelf();
      return self;
    },
    stat: readStat,
  };
}
