// Killing a loader process that ran project code, with whatever that code started. In the
// sandbox the pid namespace does it (bwrap's --die-with-parent: killing bwrap kills the
// namespace's init, and with it every process inside, setsid'd ones included). A plain process
// has no such boundary: a group kill misses a child that called setsid (`spawn(…, {detached:
// true})`), so its descendants are found through /proc first and killed one by one. What a plain
// process can still leave behind: a process that was already orphaned (a double fork whose middle
// process exited) before the kill; only the sandbox closes that.

import { readdirSync, readFileSync } from "node:fs";

/** SIGKILLs `pid`'s process group, and with `descendants`, every process below `pid`. */
export function killTree(pid: number | undefined, descendants: boolean): void {
  if (pid === undefined) return;
  // Listed before anything dies: a killed parent's children are reparented and lost to the walk.
  const below = descendants ? descendantsOf(pid) : [];
  signal(-pid);
  signal(pid);
  for (const child of below) signal(child);
}

function signal(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone (ESRCH), or a group that no longer exists.
  }
}

/** Every process whose chain of parents leads to `root`, as /proc shows it now. */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    // No /proc (not Linux): the process-group kill is all there is.
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = parentOf(entry);
    if (ppid === undefined) continue;
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const found: number[] = [];
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function parentOf(pid: string): number | undefined {
  try {
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}
