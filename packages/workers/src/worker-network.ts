// What network a sandboxed worker gets. Agent code is meant to reach the outside through
// connections, whose requests the egress gateway checks, records and signs with secrets. With the
// host's network it could also reach the runtime's API port, loopback services that bypass the
// gateway, and the internet. So by default a sandboxed worker has no network at all and reaches
// the egress gateway through the gateway bridge (gateway-bridge.ts), as microvm sessions always
// did; an operator who wants plain `fetch()` from agent code opts in with "host".

import { OpenComputerError } from "@opencomputer/agent";

/**
 * - `"gateway"` (default): an empty network namespace; only the egress gateway is reachable,
 *   through the bridge.
 * - `"host"`: the host's network (`--share-net`), for tools that call `fetch()` directly.
 *   Microvm sessions never get it.
 * Without a sandbox workers are plain processes on the host's network either way.
 */
export type WorkerNetwork = "gateway" | "host";

export const DEFAULT_WORKER_NETWORK: WorkerNetwork = "gateway";

/** `workers.network` as given (or the default), refused when it is neither value. */
export function workerNetworkOf(value: unknown): WorkerNetwork {
  if (value === undefined) return DEFAULT_WORKER_NETWORK;
  if (value === "gateway" || value === "host") return value;
  throw new OpenComputerError(
    "invalid_option",
    `workers.network must be "gateway" (agent code reaches only the egress gateway) or "host" (the host's network); got ${JSON.stringify(value)}`,
    { path: "workers.network" },
  );
}
