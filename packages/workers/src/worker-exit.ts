// Why a worker exited, in words an operator (and, for a tool call, the model) can act on. A
// worker that ran out of memory is worth naming: the kernel's memory kill and V8's heap limit
// both look like a crash otherwise (SIGKILL, or an abort).

import type { WorkerGroup } from "./worker-groups.ts";
import { heapMiB, type WorkerLimits } from "./worker-limits.ts";

/** What every memory verdict starts with, so callers can tell it from other losses. */
export const MEMORY_LIMIT_REASON = "was stopped: it reached its memory limit";

const HEAP_EXHAUSTED = /JavaScript heap out of memory|Reached heap limit/;

/** The reason for a worker's exit, given its status, its group and what it last wrote to stderr. */
export function exitReason(
  code: number | null,
  signal: NodeJS.Signals | null,
  group: WorkerGroup | undefined,
  stderrTail: string,
  limits: WorkerLimits,
): string {
  const status = `exited (${signal ?? `code ${code}`})`;
  if ((group?.oomKills() ?? 0) > 0) {
    return `${MEMORY_LIMIT_REASON} of ${limits.memoryMiB} MiB (workers.limits.memoryMiB) and the kernel killed it`;
  }
  // V8 aborts after saying so on stderr; the status varies (SIGABRT, bwrap's 134, or, as PID 1
  // of a sandbox, which ignores its own SIGABRT, glibc's fallback exit), the words do not.
  if (HEAP_EXHAUSTED.test(stderrTail)) {
    return `${MEMORY_LIMIT_REASON}: its JavaScript heap is limited to ${heapMiB(limits)} MiB (3/4 of workers.limits.memoryMiB = ${limits.memoryMiB})`;
  }
  return status;
}

export function isMemoryReason(reason: string): boolean {
  return reason.startsWith(MEMORY_LIMIT_REASON);
}
