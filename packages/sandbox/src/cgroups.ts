import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  type Controller,
  errorText,
  type GroupLimits,
  type Layout,
  tryRmdir,
  v1Layout,
  v2Layout,
} from "./cgroup-layouts.ts";

export type { GroupLimits } from "./cgroup-layouts.ts";

/**
 * Control groups for computers: one parent group per provider (`opencomputer-<pid>-<n>`), one
 * child group per computer generation holding every process of that sandbox. Limits on the
 * child bound the computer as a whole (memory is the sum over its processes, unlike RLIMIT_AS).
 * v1 and v2 are detected once (see cgroup-layouts.ts); the rest of the package only sees this.
 */

export interface ComputerGroup {
  /** The group's directories (one on v2; one per hierarchy on v1). */
  readonly paths: string[];
  /** Moves processes into the group; everything they fork later starts in it. */
  admit(pids: number[]): void;
  /** OOM kills so far in this group, or undefined when the kernel does not count them. */
  oomKills(): number | undefined;
  /** Removes the group, retrying briefly while processes leave; false if some remain. */
  remove(): Promise<boolean>;
}

export interface Cgroups {
  readonly version: 1 | 2;
  /** The provider's parent group directories (created with the first computer). */
  readonly parentPaths: string[];
  create(name: string, limits: GroupLimits): ComputerGroup;
  /** Removes leftover child groups (retrying briefly) and the parent group. */
  close(): Promise<void>;
}

/** What a provider reports: on, and where; or off, and why (like a missing prlimit). */
export type CgroupStatus =
  | { enabled: true; version: 1 | 2; parentPaths: string[] }
  | { enabled: false; reason: string };

export const DEFAULT_CGROUP_ROOT = "/sys/fs/cgroup";

const PARENT_PREFIX = "opencomputer-";
let providerSequence = 0;

async function removeDirs(dirs: string[], attempts: number): Promise<boolean> {
  let left = dirs.filter((dir) => existsSync(dir));
  for (let attempt = 0; left.length > 0 && attempt < attempts; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25));
    left = left.filter((dir) => !tryRmdir(dir));
  }
  return left.length === 0;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Parents left by runtimes that died without closing their provider: removed when empty
 * (their computers died with them, --die-with-parent). A live pid's groups are never touched.
 */
function removeStaleParents(parents: string[]): void {
  for (const base of new Set(parents.map((parent) => dirname(parent)))) {
    let names: string[];
    try {
      names = readdirSync(base);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = new RegExp(`^${PARENT_PREFIX}(\\d+)-\\d+$`).exec(name)?.[1];
      if (pid === undefined || alive(Number(pid))) continue;
      const stale = join(base, name);
      for (const child of readdirSync(stale, { withFileTypes: true })) {
        if (child.isDirectory()) tryRmdir(join(stale, child.name));
      }
      tryRmdir(stale);
    }
  }
}

/** Trees of this process, so whatever is empty at exit is removed even without close(). */
const liveTrees = new Set<CgroupTree>();
let exitHookInstalled = false;

/**
 * Detects cgroup support under `root` (normally /sys/fs/cgroup). Creating the parent is probed
 * (made and removed at once); the real parent is made with the first computer, so a process
 * that never starts one leaves nothing behind.
 */
export function detectCgroups(root: string = DEFAULT_CGROUP_ROOT): {
  cgroups: Cgroups | undefined;
  status: CgroupStatus;
} {
  const parentName = `${PARENT_PREFIX}${process.pid}-${++providerSequence}`;
  let layout: Layout | string;
  if (!existsSync(root)) layout = `no cgroup filesystem at ${root}`;
  else if (existsSync(join(root, "cgroup.controllers"))) layout = v2Layout(root, parentName);
  else layout = v1Layout(root, parentName);
  if (typeof layout === "string") {
    return { cgroups: undefined, status: { enabled: false, reason: layout } };
  }
  const cgroups = new CgroupTree(layout);
  return {
    cgroups,
    status: { enabled: true, version: layout.version, parentPaths: cgroups.parentPaths },
  };
}

class CgroupTree implements Cgroups {
  readonly version: 1 | 2;
  readonly parentPaths: string[];
  /** Child groups that still had processes when removed (e.g. frozen): retried on close. */
  private readonly leftovers = new Set<string>();
  private staleChecked = false;

  constructor(private readonly layout: Layout) {
    this.version = layout.version;
    this.parentPaths = [...new Set(layout.parents.values())];
  }

  create(name: string, limits: GroupLimits): ComputerGroup {
    const dirs = new Map<Controller, string>();
    for (const [controller, parent] of this.layout.parents)
      dirs.set(controller, join(parent, name));
    const paths = [...new Set(dirs.values())];
    try {
      if (!this.staleChecked) {
        this.staleChecked = true;
        removeStaleParents(this.parentPaths);
      }
      // Also after close(): a closed provider may still start computers.
      if (this.parentPaths.some((parent) => !existsSync(parent))) this.layout.makeParents();
      this.track();
      for (const path of paths) mkdirSync(path);
      this.layout.setLimits(dirs, limits);
    } catch (error) {
      for (const path of paths) tryRmdir(path);
      throw new Error(`Could not create the computer's control group: ${errorText(error)}`);
    }
    const leftovers = this.leftovers;
    return {
      paths,
      admit(pids) {
        // cgroup.procs takes one pid per write; on v1 each hierarchy is joined separately.
        for (const path of paths) {
          for (const pid of pids) writeFileSync(join(path, "cgroup.procs"), String(pid));
        }
      },
      oomKills: () => this.layout.oomKills(dirs),
      async remove() {
        const removed = await removeDirs(paths, 20);
        for (const path of paths) {
          if (removed) leftovers.delete(path);
          else leftovers.add(path);
        }
        return removed;
      },
    };
  }

  async close(): Promise<void> {
    await removeDirs([...this.leftovers], 40);
    await removeDirs(this.parentPaths, 40);
    liveTrees.delete(this);
  }

  /** Last chance at exit (synchronous, one attempt each): empty groups are removed. */
  removeNow(): void {
    for (const dir of [...this.leftovers, ...this.parentPaths]) tryRmdir(dir);
  }

  private track(): void {
    liveTrees.add(this);
    if (exitHookInstalled) return;
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const tree of liveTrees) tree.removeNow();
    });
  }
}
