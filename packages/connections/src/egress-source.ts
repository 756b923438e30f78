// The runtime asks for egress values per execution of agent code with the session, agent,
// deployment and turn; the token also needs the session's environment (whose secrets apply),
// which never changes for a session, so it is looked up once per session. Each grant carries
// `revoke`, which the runtime calls when the execution settles: the token dies with its call.

import type { EgressGateway } from "./gateway.ts";

export interface EgressSourceRequest {
  sessionId: string;
  agentId: string;
  deploymentId: string;
  turnId?: string;
  callId?: string;
  phase?: "run" | "preview" | "apply";
  decisionId?: string;
}

/** The egress values of one execution, and the end of its token. */
export interface EgressGrant {
  gatewayUrl: string;
  token: string;
  revoke(): void;
}

const MAX_CACHED_SESSIONS = 10_000;

/** Adapts the gateway to the runtime's `egress` option. */
export function gatewayEgressSource(
  gateway: Pick<EgressGateway, "issue" | "revoke">,
  environmentOf: (sessionId: string) => Promise<string | undefined>,
  options: { ttlMs?: number } = {},
) {
  const environments = new Map<string, string>();
  return async (request: EgressSourceRequest): Promise<EgressGrant> => {
    let environment = environments.get(request.sessionId);
    if (environment === undefined) {
      // An unknown session gets production's secrets, never development's.
      environment = (await environmentOf(request.sessionId)) ?? "production";
      if (environments.size >= MAX_CACHED_SESSIONS) environments.clear();
      environments.set(request.sessionId, environment);
    }
    const issued = gateway.issue({
      ...request,
      environment,
      ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    });
    return { ...issued, revoke: () => void gateway.revoke(issued.token) };
  };
}
