// An egress token dies with its call: revoked, it is refused (egress_token_expired) and the
// requests it still has in flight are aborted; never revoked, it ends at its expiry on the
// gateway's clock. Refused tokens record nothing in the session's log.

import { defineConnection, EgressError } from "@opencomputer/agent";
import { connectionDeclaration, runWithEgress } from "@opencomputer/agent/internal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEgressGateway,
  type EgressEvent,
  type EgressGateway,
  gatewayEgressSource,
} from "../src/index.ts";
import { type Origin, startOrigin, until } from "./origin.ts";

let origin: Origin;
let gateway: EgressGateway;
let clock = Date.parse("2030-01-01T00:00:00Z");
let api: ReturnType<typeof defineConnection>;
const events: Array<{ sessionId: string } & EgressEvent> = [];

beforeAll(async () => {
  origin = await startOrigin();
  api = defineConnection({ id: "api", origin: origin.url });
  gateway = createEgressGateway({
    devMode: true,
    secrets: { resolve: async () => undefined },
    connections: () => [connectionDeclaration(api)],
    events: (sessionId, event) => void events.push({ sessionId, ...event }),
    now: () => clock,
  });
  await gateway.listen();
});

afterAll(async () => {
  await gateway.close();
  await origin.close();
});

const claims = { agentId: "a", environment: "development", turnId: "turn_1" };
async function failure(promise: Promise<unknown>): Promise<EgressError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EgressError);
  return error as EgressError;
}

describe("egress token lifetime", () => {
  it("a revoked token is refused and records nothing", async () => {
    const ctx = gateway.issue({ sessionId: "ses_r", ...claims });
    const ok = await runWithEgress(ctx, () => api.fetch("/v1/echo"));
    expect(ok.status).toBe(200);
    await ok.text();
    expect(gateway.revoke(ctx.token)).toBe(true);
    expect(gateway.revoke(ctx.token)).toBe(false);
    const logged = events.length;
    const sent = origin.received.length;
    const error = await failure(runWithEgress(ctx, () => api.fetch("/v1/echo")));
    expect(error.code).toBe("egress_token_expired");
    expect(error.message).toContain("ended with its tool call");
    expect(origin.received.length).toBe(sent);
    expect(events.length).toBe(logged);
  });

  it("revoking aborts the token's requests still in flight", async () => {
    const ctx = gateway.issue({ sessionId: "ses_f", ...claims });
    const before = origin.received.length;
    const closed = origin.closedEarly;
    const pending = runWithEgress(ctx, () => api.fetch("/v1/slow"));
    await until(() => origin.received.length > before);
    gateway.revoke(ctx.token);
    await expect(pending).rejects.toThrow();
    await until(() => origin.closedEarly === closed + 1);
    await until(() => events.some((e) => e.sessionId === "ses_f" && e.type === "egress.failed"));
    const failed = events.find((e) => e.sessionId === "ses_f" && e.type === "egress.failed")!;
    expect(failed.data.message).toContain("the tool call that made it has ended");
  });

  it("a token never revoked ends at its expiry on the gateway's clock", async () => {
    const ctx = gateway.issue({ sessionId: "ses_t", ...claims, ttlMs: 60_000 });
    clock += 59_999;
    const ok = await runWithEgress(ctx, () => api.fetch("/v1/echo"));
    await ok.text();
    clock += 1;
    expect((await failure(runWithEgress(ctx, () => api.fetch("/v1/echo")))).code).toBe(
      "egress_token_expired",
    );
  });

  it("the runtime's source hands out a revoke with each grant; expired grants are pruned", async () => {
    const source = gatewayEgressSource(gateway, async () => "development");
    const grant = await source({ sessionId: "ses_s", agentId: "a", deploymentId: "d" });
    const live = gateway.liveTokens;
    grant.revoke();
    expect(gateway.liveTokens).toBe(live - 1);
    const error = await failure(runWithEgress(grant, () => api.fetch("/v1/echo")));
    expect(error.code).toBe("egress_token_expired");
    // Tokens nobody revoked leave the gateway's memory once expired.
    gateway.issue({ sessionId: "ses_s", ...claims, ttlMs: 1000 });
    clock += 16 * 60_000;
    gateway.issue({ sessionId: "ses_s", ...claims });
    expect(gateway.liveTokens).toBe(1);
  });
});
