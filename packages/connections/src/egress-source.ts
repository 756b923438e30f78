// The runtime asks for egress values per execution of agent code with the session, agent,
// deployment and turn; the token also needs the session's environment (whose secrets apply),
// which never changes for a session, so it is looked up once per session.

import type { EgressGateway } from "./gateway.ts";

export interface EgressSourceRequest {
  sessionId: string;
  agentId: string;
  deploymentId: string;
  turnId?: string;
}

const MAX_CACHED_SESSIONS = 10_000;

/** Adapts the gateway to the runtime's `egress` option. */
export function gatewayEgressSource(
  gateway: Pick<EgressGateway, "issue">,
  environmentOf: (sessionId: string) => Promise<string | undefined>,
  options: { ttlMs?: number } = {},
) {
  const environments = new Map<string, string>();
  return async (request: EgressSourceRequest): Promise<{ gatewayUrl: string; token: string }> => {
    let environment = environments.get(request.sessionId);
    if (environment === undefined) {
      // An unknown session gets production's secrets, never development's.
      environment = (await environmentOf(request.sessionId)) ?? "production";
      if (environments.size >= MAX_CACHED_SESSIONS) environments.clear();
      environments.set(request.sessionId, environment);
    }
    return gateway.issue({
      ...request,
      environment,
      ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    });
  };
}
