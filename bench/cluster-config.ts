// Settings the cluster benchmark's parent (cluster.ts, takeover.ts) and its children
// (cluster-child.ts) share; a module of its own, since importing the child would run it.

/** The lease of every benchmark runtime; the takeover's survivors wait for at most this. */
export const BENCH_LEASE_MS = 3000;
