// Where crash mode kills a runtime: just before or just after its k-th store commit (every state
// change is one commit, docs/engine.md), or as a tool's code sends its k-th outbound request
// (inside a `run` or an `apply`, after the gateway recorded it and before the origin answers).
// The process kills itself with SIGKILL at that exact point, as the runtime's own crash tests
// do (packages/runtime/test/crash/delegation-child.ts): no cleanup, no flush, the real thing.

import type { Store } from "@opencomputer/runtime";

export type KillPoint =
  | { at: "commit"; n: number; when: "before" | "after" }
  | { at: "egress"; n: number };

export function describeKill(point: KillPoint): string {
  return point.at === "commit"
    ? `${point.when} commit #${point.n}`
    : `inside a tool, at outbound request #${point.n}`;
}

const die = (): never => {
  process.kill(process.pid, "SIGKILL");
  throw new Error("unreachable");
};

/** Counts commits; with a commit kill point, dies there. */
export function killingStore(
  inner: Store,
  point: KillPoint | undefined,
  counter: { commits: number },
): Store {
  const around = async <T>(write: () => Promise<T>): Promise<T> => {
    const n = ++counter.commits;
    const hit = point?.at === "commit" && point.n === n;
    if (hit && point.when === "before") die();
    const out = await write();
    if (hit) die();
    return out;
  };
  const wrapped: Partial<Store> = {
    apply: (sessionId, batch) => around(() => inner.apply(sessionId, batch)),
    applyWithLease: (sessionId, runtimeId, ttl, batch) =>
      around(() => inner.applyWithLease(sessionId, runtimeId, ttl, batch)),
    createSession: (session, events) => around(() => inner.createSession(session, events)),
  };
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(wrapped, key)) return wrapped[key as keyof Store];
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Dies at the k-th request when the kill point says so (after it was recorded). */
export function egressKiller(
  point: KillPoint | undefined,
  counter: { egress: number },
): () => void {
  return () => {
    const n = ++counter.egress;
    if (point?.at === "egress" && point.n === n) die();
  };
}
