import type { MemoryApi, Runtime } from "@opencomputer/runtime";

/** What every route needs: the runtime it wraps and the handler's limits. */
export interface RouteContext {
  sessions: Runtime["sessions"];
  approvals: Runtime["approvals"];
  /** The owner's memory API; the memory routes answer 404 without it. */
  memory?: MemoryApi;
  maxBodyBytes: number;
  /** SSE: how often to re-read the store for events written by other processes. */
  pollMs: number;
  /** SSE: how often to send a comment so proxies keep an idle stream open. */
  heartbeatMs: number;
}
