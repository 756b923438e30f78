// Agent code reaches external APIs only through the egress gateway: every execution runs inside
// the SDK's egress context (the gateway's URL and the session's short-lived token), which
// `connection.fetch` reads. This is the one place the runtime enters it, in this process or in
// a worker with the values the control plane sent along with the call.

import { runWithEgress } from "@opencomputer/agent/internal";
import type { Egress } from "../ports/agent-execution.ts";

/** Runs `fn` with the egress context set when the call carries one. */
export function withEgress<T>(
  egress: Egress | undefined,
  signal: AbortSignal | undefined,
  fn: () => T,
): T {
  if (!egress) return fn();
  return runWithEgress({ gatewayUrl: egress.gatewayUrl, token: egress.token, signal }, fn);
}
