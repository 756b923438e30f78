// A control group per worker process (memory, tasks, CPU), made with @opencomputer/sandbox's
// cgroup code as computers' are. Per worker rather than per pool: the kernel's memory kill then
// takes only the worker that went over, its pool replaces it, and the calls on other workers go
// on. Without usable cgroups (no permission, missing controllers) workers start without one and
// `status` says why; the rlimits and the V8 heap limit still apply (worker-spawn.ts).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type CgroupStatus,
  type Cgroups,
  type ComputerGroup,
  DEFAULT_CGROUP_ROOT,
  detectCgroups,
} from "@opencomputer/sandbox";
import { MIB, type WorkerLimits } from "./worker-limits.ts";

export type WorkerGroup = ComputerGroup;

export class WorkerGroups {
  readonly status: CgroupStatus;
  private readonly tree: Cgroups | undefined;
  private sequence = 0;

  /** `root: false` turns control groups off (as on a host without them). */
  constructor(root: string | false = DEFAULT_CGROUP_ROOT) {
    const detected =
      root === false
        ? { cgroups: undefined, status: { enabled: false as const, reason: "turned off" } }
        : detectCgroups(root);
    this.tree = detected.cgroups;
    this.status = detected.status;
  }

  /**
   * A new group with the worker's limits, or undefined without cgroups. A host that refuses
   * this one group (it allowed the probe) fails the worker's start rather than running it
   * unbounded.
   */
  create(limits: WorkerLimits): WorkerGroup | undefined {
    if (!this.tree) return undefined;
    return this.tree.create(`worker-${++this.sequence}`, {
      totalMemoryBytes: limits.memoryMiB * MIB,
      maxTasks: limits.maxTasks,
      cpus: limits.cpus,
    });
  }

  async close(): Promise<void> {
    await this.tree?.close();
  }
}

/**
 * SIGKILLs every process left in the group. A plain worker has no pid namespace: what its tools
 * started (even setsid'd) would outlive it; the group still holds them all.
 */
export function killGroup(group: WorkerGroup): void {
  for (const path of group.paths) {
    let pids: string[];
    try {
      pids = readFileSync(join(path, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
    } catch {
      continue;
    }
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
}
