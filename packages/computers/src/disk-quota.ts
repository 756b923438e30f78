import { measureTree } from "@opencomputer/sandbox";

/**
 * The disk quota of a computer's persistent directories (/workspace, and the control directory
 * holding command output). /workspace must live on the host's disk, so there is no tmpfs size
 * to lean on; the runtime measures usage instead (allocated blocks and entries, through a walk
 * that never follows a link — see measureTree) for as long as the computer lives: every
 * BUSY_INTERVAL_MS while a command runs, every IDLE_INTERVAL_MS between commands (background
 * processes may still write), each at least 4x the last walk's duration so a huge tree cannot
 * keep the runtime busy. Over the limit, the owner stops the computer.
 *
 * The limit a computer is held to is the quota, or what it already used when the current
 * command started if that was more (an earlier overshoot): a command that deletes files is
 * never stopped for usage it did not add.
 */

export const BUSY_INTERVAL_MS = 250;
export const IDLE_INTERVAL_MS = 2000;
/**
 * Trees up to this many entries are measured again after every command (a few ms); larger
 * ones only periodically. A count, not a duration, so the rule does not depend on load.
 */
export const QUICK_WALK_ENTRIES = 20_000;
/** Directories nested deeper than this count as over the quota (nothing real needs them). */
export const MAX_DEPTH = 256;

export interface DiskQuota {
  bytes: number;
  entries: number;
}

export interface DiskUsage {
  bytes: number;
  entries: number;
  tooDeep: boolean;
  /** True when bytes or entries are above the limit (the walk stopped there). */
  over: boolean;
}

export async function measureDisk(dirs: string[], limit: DiskQuota): Promise<DiskUsage> {
  const usage: DiskUsage = { bytes: 0, entries: 0, tooDeep: false, over: false };
  for (const dir of dirs) {
    const part = await measureTree(dir, {
      stopAboveBytes: limit.bytes - usage.bytes,
      stopAboveEntries: limit.entries - usage.entries,
      maxDepth: MAX_DEPTH,
    }).catch(() => undefined); // A directory that cannot be opened holds nothing measurable.
    if (!part) continue;
    usage.bytes += part.bytes;
    usage.entries += part.entries;
    usage.tooDeep ||= part.tooDeep;
  }
  usage.over = usage.bytes > limit.bytes || usage.entries > limit.entries || usage.tooDeep;
  return usage;
}

export function describeUsage(usage: DiskUsage, quota: DiskQuota): string {
  const mib = (n: number) => `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (usage.tooDeep) return `directories in /workspace are nested deeper than ${MAX_DEPTH} levels`;
  if (usage.entries > quota.entries) {
    return `/workspace holds more than ${quota.entries} files and directories (the quota)`;
  }
  return `/workspace uses at least ${mib(usage.bytes)} of its ${mib(quota.bytes)} disk quota`;
}

/** Watches one computer's directories until stopped; calls `onOver` once when over. */
export class DiskWatch {
  private busy = false;
  private limit: DiskQuota;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastWalkMs = 0;
  /** The most recent measurement, if any. */
  private last: DiskUsage | undefined;
  private checking: Promise<DiskUsage> | undefined;

  constructor(
    private readonly dirs: string[],
    private readonly quota: DiskQuota,
    private readonly onOver: (usage: DiskUsage) => void,
  ) {
    this.limit = quota;
    this.schedule();
  }

  /**
   * A command starts: the limit becomes max(quota, current usage) and checks speed up. The
   * last measurement serves when it was under the quota (then the limit is the quota anyway);
   * only a computer already over it (or never measured) is measured again here.
   */
  async commandStarts(): Promise<void> {
    if (
      this.last === undefined ||
      this.last.bytes > this.quota.bytes ||
      this.last.entries > this.quota.entries
    ) {
      // Bytes cost the walk nothing; entries are bounded so a huge tree stays a bounded walk.
      const now = await measureDisk(this.dirs, {
        bytes: Infinity,
        entries: 2 * this.quota.entries,
      });
      this.last = now;
      this.limit = {
        bytes: Math.max(this.quota.bytes, now.bytes),
        entries: Math.max(this.quota.entries, now.entries),
      };
    } else {
      this.limit = this.quota;
    }
    this.busy = true;
    this.schedule();
  }

  /**
   * Right after a command, so a burst that ended between two checks is still caught and
   * blamed on the command that wrote it. Skipped for a huge tree: the periodic check then
   * catches it within the interval instead of slowing every command down.
   */
  async checkAfterCommand(): Promise<DiskUsage | undefined> {
    const entries = this.last?.entries ?? 0;
    return entries <= QUICK_WALK_ENTRIES ? this.check() : undefined;
  }

  commandEnded(): void {
    this.busy = false;
    this.schedule();
  }

  /** One measurement against the current limit (also used right after each command). */
  check(): Promise<DiskUsage> {
    this.checking ??= (async () => {
      const started = performance.now();
      try {
        const usage = await measureDisk(this.dirs, this.limit);
        this.last = usage;
        return usage;
      } finally {
        this.lastWalkMs = performance.now() - started;
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const base = this.busy ? BUSY_INTERVAL_MS : IDLE_INTERVAL_MS;
    this.timer = setTimeout(() => void this.tick(), Math.max(base, 4 * this.lastWalkMs));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const usage = await this.check();
    if (this.stopped) return;
    if (usage.over) {
      this.stop();
      this.onOver(usage);
      return;
    }
    this.schedule();
  }
}
