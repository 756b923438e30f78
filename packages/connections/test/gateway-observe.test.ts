// The gateway's `observe` option (what `opencomputer test --crash` records): each request that
// passed the checks, with the tool call its token names and the agent's own Idempotency-Key,
// before the origin is called; never a secret header; nothing for a refused request.
import { bearer, defineConnection, useSecret } from "@opencomputer/agent";
import { connectionDeclaration, runWithEgress } from "@opencomputer/agent/internal";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEgressGateway, type EgressGateway, type ObservedEgress } from "../src/index.ts";
import { type Origin, startOrigin } from "./origin.ts";

const SECRET = "sk_test_observe_do_not_leak";
let origin: Origin;
let gateway: EgressGateway;
const observed: Array<ObservedEgress & { originHadIt: number }> = [];
const billing = () =>
  defineConnection({
    id: "billing",
    origin: origin.url,
    headers: { authorization: bearer(useSecret("BILLING_KEY")) },
    methods: ["GET", "POST"],
    pathPrefix: "/v1",
  });

beforeAll(async () => {
  origin = await startOrigin();
  const declared = [connectionDeclaration(billing())];
  gateway = createEgressGateway({
    devMode: true,
    secrets: { resolve: async () => SECRET },
    connections: () => declared,
    // How many requests the origin had when the gateway reported this one: it comes first.
    observe: (request) => void observed.push({ ...request, originHadIt: origin.received.length }),
  });
  await gateway.listen();
});
afterAll(async () => {
  await gateway.close();
  await origin.close();
});

it("reports each request with its call, phase and idempotency key, before the origin sees it", async () => {
  const connection = billing();
  const issued = gateway.issue({
    sessionId: "ses_1",
    agentId: "a",
    environment: "development",
    callId: "call_7",
    phase: "apply",
    decisionId: "dec_9",
  });
  await runWithEgress(issued, async () => {
    await connection.fetch("/v1/echo", {
      method: "POST",
      headers: { "idempotency-key": "dec_9", "content-type": "application/json" },
      body: "{}",
    });
    await connection.fetch("/v1/echo");
    // Refused (outside the prefix): not observed.
    await connection.fetch("/v2/echo").catch(() => {});
  });
  expect(observed).toHaveLength(2);
  expect(observed[0]).toMatchObject({
    connectionId: "billing",
    method: "POST",
    path: "/v1/echo",
    idempotencyKey: "dec_9",
    originHadIt: 0,
    claims: { sessionId: "ses_1", callId: "call_7", phase: "apply", decisionId: "dec_9" },
  });
  expect(observed[1]).toMatchObject({ method: "GET", idempotencyKey: undefined, originHadIt: 1 });
  expect(JSON.stringify(observed)).not.toContain(SECRET);
  expect(origin.received[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
});
