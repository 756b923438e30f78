import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The two cgroup layouts, each behind the same small `Layout`:
 * - v2 (unified; `cgroup.controllers` at the root): one directory per group; `memory.max`,
 *   `memory.swap.max`, `pids.max`, `cpu.max`; a controller only reaches a group's files when it
 *   is enabled in every ancestor's `cgroup.subtree_control`.
 * - v1 (one hierarchy per controller: `<root>/memory`, `<root>/pids`, `<root>/cpu`): a group is
 *   one directory per hierarchy; `memory.limit_in_bytes` (+ `memory.memsw.limit_in_bytes` when
 *   swap is accounted), `pids.max`, `cpu.cfs_quota_us` / `cpu.cfs_period_us`.
 */

export interface GroupLimits {
  /** Memory of all the computer's processes together (swap cannot extend it). */
  totalMemoryBytes: number;
  /** Tasks (processes and threads) in the computer at once. */
  maxTasks: number;
  /** CPU time per wall-clock time, in cores (1 = one core's worth). */
  cpus: number;
}

export const CONTROLLERS = ["memory", "pids", "cpu"] as const;
export type Controller = (typeof CONTROLLERS)[number];

export interface Layout {
  version: 1 | 2;
  /** The provider's parent group per controller (on v2 one directory for all three). */
  parents: Map<Controller, string>;
  /** Creates the parent group(s); throws when the host refuses. */
  makeParents(): void;
  setLimits(groupDirs: Map<Controller, string>, limits: GroupLimits): void;
  /** OOM kills counted in the group, or undefined when the kernel does not report them. */
  oomKills(groupDirs: Map<Controller, string>): number | undefined;
}

const CPU_PERIOD_US = 100_000;
const ENABLE = CONTROLLERS.map((c) => `+${c}`).join(" ");

export function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One attempt: true when the directory is gone (EBUSY while processes remain inside). */
export function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** The runtime's own cgroup per controller (`""` is the v2 entry), from /proc/self/cgroup. */
function ownPaths(): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of (read("/proc/self/cgroup") ?? "").split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const controller of (match[1] ?? "").split(",")) paths.set(controller, match[2] ?? "/");
  }
  return paths;
}

/**
 * Where the parent may go: under the runtime's own group first, so whatever bounds the runtime
 * (a service's or container's limit) bounds its computers too; the hierarchy's root otherwise.
 */
function candidates(hierarchy: string, own: string | undefined): string[] {
  const nested = own && own !== "/" ? join(hierarchy, own) : undefined;
  return nested && existsSync(nested) ? [nested, hierarchy] : [hierarchy];
}

function counter(text: string | undefined, key: string): number | undefined {
  const match = new RegExp(`^${key} (\\d+)$`, "m").exec(text ?? "");
  return match ? Number(match[1]) : undefined;
}

function cpuQuota(cpus: number): number {
  if (!(cpus > 0)) throw new RangeError(`limits.cpus must be positive, got ${cpus}`);
  // The kernel refuses quotas under 1 ms.
  return Math.max(1000, Math.round(cpus * CPU_PERIOD_US));
}

/**
 * Tries each candidate base by really creating the parent there and removing it again: only
 * that proves groups can be made (not root, a read-only mount, a busy v2 group all show here).
 */
function probe(
  bases: string[],
  make: (base: string) => void,
): { base?: string; failures: string[] } {
  const failures: string[] = [];
  for (const base of bases) {
    try {
      make(base);
      return { base, failures };
    } catch (error) {
      failures.push(`${base}: ${errorText(error)}`);
    }
  }
  return { failures };
}

function makeV2Parent(base: string, parent: string): void {
  const enabled = (read(join(base, "cgroup.subtree_control")) ?? "").split(/\s+/);
  // Fails (EBUSY) when `base` holds processes itself, as the runtime's own group usually does.
  if (CONTROLLERS.some((c) => !enabled.includes(c))) {
    writeFileSync(join(base, "cgroup.subtree_control"), ENABLE);
  }
  mkdirSync(parent);
  try {
    writeFileSync(join(parent, "cgroup.subtree_control"), ENABLE);
  } catch (error) {
    tryRmdir(parent);
    throw error;
  }
}

export function v2Layout(root: string, parentName: string): Layout | string {
  const available = (read(join(root, "cgroup.controllers")) ?? "").trim().split(/\s+/);
  const missing = CONTROLLERS.filter((c) => !available.includes(c));
  if (missing.length > 0)
    return `cgroup v2 at ${root} lacks the ${missing.join(", ")} controller(s)`;
  const { base, failures } = probe(candidates(root, ownPaths().get("")), (b) => {
    makeV2Parent(b, join(b, parentName));
    tryRmdir(join(b, parentName));
  });
  if (base === undefined) return `cgroup v2 at ${root} is not usable (${failures.join("; ")})`;
  const parent = join(base, parentName);
  return {
    version: 2,
    parents: new Map(CONTROLLERS.map((c) => [c, parent])),
    makeParents: () => makeV2Parent(base, parent),
    setLimits(dirs, limits) {
      const dir = dirs.get("memory") ?? "";
      writeFileSync(join(dir, "memory.max"), String(limits.totalMemoryBytes));
      // Swap would let the computer hold more than its limit: none, so the sum stays bounded.
      const swap = join(dir, "memory.swap.max");
      if (existsSync(swap)) writeFileSync(swap, "0");
      writeFileSync(join(dir, "pids.max"), String(limits.maxTasks));
      writeFileSync(join(dir, "cpu.max"), `${cpuQuota(limits.cpus)} ${CPU_PERIOD_US}`);
    },
    oomKills: (dirs) => counter(read(join(dirs.get("memory") ?? "", "memory.events")), "oom_kill"),
  };
}

/** A file that only exists in a v1 group of that controller (not at the hierarchy root). */
const V1_MARKER: Record<Controller, string> = {
  memory: "memory.limit_in_bytes",
  pids: "pids.max",
  cpu: "cpu.cfs_quota_us",
};

function makeV1Parent(controller: Controller, parent: string): void {
  mkdirSync(parent);
  if (!existsSync(join(parent, V1_MARKER[controller]))) {
    tryRmdir(parent);
    throw new Error(`no ${V1_MARKER[controller]} in a new group`);
  }
}

export function v1Layout(root: string, parentName: string): Layout | string {
  const own = ownPaths();
  const parents = new Map<Controller, string>();
  for (const controller of CONTROLLERS) {
    const hierarchy = join(root, controller);
    if (!existsSync(join(hierarchy, "cgroup.procs"))) {
      return `cgroup v1 at ${root} has no ${controller} hierarchy`;
    }
    const { base, failures } = probe(candidates(hierarchy, own.get(controller)), (b) => {
      makeV1Parent(controller, join(b, parentName));
      tryRmdir(join(b, parentName));
    });
    if (base === undefined) return `cgroup v1 at ${root} is not usable (${failures.join("; ")})`;
    parents.set(controller, join(base, parentName));
  }
  return {
    version: 1,
    parents,
    makeParents() {
      for (const [controller, parent] of parents) {
        if (!existsSync(parent)) makeV1Parent(controller, parent);
      }
    },
    setLimits(dirs, limits) {
      const memory = dirs.get("memory") ?? "";
      writeFileSync(join(memory, "memory.limit_in_bytes"), String(limits.totalMemoryBytes));
      // memsw bounds memory plus swap; equal to the memory limit, nothing can spill into swap.
      // It must come after memory.limit_in_bytes: the kernel keeps memsw >= memory.
      const memsw = join(memory, "memory.memsw.limit_in_bytes");
      if (existsSync(memsw)) writeFileSync(memsw, String(limits.totalMemoryBytes));
      writeFileSync(join(dirs.get("pids") ?? "", "pids.max"), String(limits.maxTasks));
      const cpu = dirs.get("cpu") ?? "";
      writeFileSync(join(cpu, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
      writeFileSync(join(cpu, "cpu.cfs_quota_us"), String(cpuQuota(limits.cpus)));
    },
    oomKills: (dirs) =>
      counter(read(join(dirs.get("memory") ?? "", "memory.oom_control")), "oom_kill"),
  };
}
