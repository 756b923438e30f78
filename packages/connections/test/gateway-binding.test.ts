// A secret bound to origins reaches only those: an agent that declares a connection to another
// origin with useSecret("ANY") gets egress_secret_origin_refused (naming the secret and the
// connection, never the value), and the origin is not called. Unbound secrets go anywhere a
// connection points, as before; .env.local values are unbound.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bearer, defineConnection, EgressError, useSecret } from "@opencomputer/agent";
import {
  connectionDeclaration,
  runWithEgress,
  egressWire as wire,
} from "@opencomputer/agent/internal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEgressGateway,
  type EgressEvent,
  type EgressGateway,
  FileSecretStore,
} from "../src/index.ts";
import { type Origin, startOrigin } from "./origin.ts";

const BOUND = "sk_bound_91c4_only_for_billing";
const FREE = "sk_free_0d2e_goes_anywhere";
let origin: Origin;
let gateway: EgressGateway;
let dir: string;
const events: EgressEvent[] = [];
const connections: Record<string, ReturnType<typeof defineConnection>> = {};

beforeAll(async () => {
  origin = await startOrigin();
  dir = mkdtempSync(join(tmpdir(), "oc-gw-binding-"));
  const store = new FileSecretStore({
    file: join(dir, "secrets.json"),
    keyFile: join(dir, "secret.key"),
  });
  await store.set("development", "BILLING_KEY", BOUND, { origins: [origin.url] });
  await store.set("development", "FREE_KEY", FREE);
  const define = (id: string, url: string, secret: string) =>
    defineConnection({ id, origin: url, headers: { authorization: bearer(useSecret(secret)) } });
  // Same server, two origins: 127.0.0.1 is the bound one, localhost is "an origin of its choice".
  connections.billing = define("billing", origin.url, "BILLING_KEY");
  connections.exfil = define("exfil", origin.otherUrl, "BILLING_KEY");
  connections.free = define("free", origin.otherUrl, "FREE_KEY");
  gateway = createEgressGateway({
    devMode: true,
    secrets: store,
    connections: () => Object.values(connections).map(connectionDeclaration),
    events: (_sessionId, event) => void events.push(event),
  });
  await gateway.listen();
});

afterAll(async () => {
  await gateway.close();
  await origin.close();
  rmSync(dir, { recursive: true, force: true });
});

const claims = { sessionId: "ses_b", agentId: "a", environment: "development" };
const call = (id: string, path = "/v1/echo") =>
  runWithEgress(gateway.issue(claims), () => connections[id]!.fetch(path));

describe("origin bindings at the gateway", () => {
  it("send a bound secret to its origin", async () => {
    const response = await call("billing");
    expect(response.status).toBe(200);
    expect(origin.received.at(-1)!.headers.authorization).toBe(`Bearer ${BOUND}`);
  });

  it("refuse a bound secret on a connection to another origin, before calling it", async () => {
    const sent = origin.received.length;
    const error = await call("exfil").then(
      () => undefined,
      (e: unknown) => e as EgressError,
    );
    expect(error).toBeInstanceOf(EgressError);
    expect(error!.code).toBe("egress_secret_origin_refused");
    expect(error!.details.path).toBe("headers.authorization");
    expect(error!.message).toContain("BILLING_KEY");
    expect(error!.message).toContain('"exfil"');
    expect(error!.message).toContain(`--origin ${origin.otherUrl}`);
    expect(origin.received.length).toBe(sent);
    const failed = events.at(-1)!;
    expect(failed).toMatchObject({ type: "egress.failed", data: { connectionId: "exfil" } });
    expect(JSON.stringify(events) + error!.message).not.toContain(BOUND);
  });

  it("let unbound secrets go where the connection points", async () => {
    expect((await call("free")).status).toBe(200);
    expect(origin.received.at(-1)!.headers.authorization).toBe(`Bearer ${FREE}`);
  });
});

describe("dot segments at the gateway", () => {
  const forms = [
    "/v1/..;/admin",
    "/v1/%2e%2e;/admin",
    "/v1/%2E%2e;/admin",
    "/v1/..%3B/admin",
    "/v1/x/.;/..;/..;/admin",
    "/v1/..%2fadmin",
    "/v1/%2E%2E%2Fadmin",
  ];
  it.each(forms)("refuses %s on a /v1 connection without calling the origin", async (path) => {
    const scoped = defineConnection({ id: "scoped", origin: origin.url, pathPrefix: "/v1" });
    connections.scoped = scoped;
    const sent = origin.received.length;
    const token = gateway.issueToken("ses_p", { agentId: "a", environment: "development" });
    const response = await fetch(gateway.sessionUrl("ses_p"), {
      method: "POST",
      headers: {
        [wire.EGRESS_TOKEN_HEADER]: token,
        [wire.EGRESS_CONNECTION_HEADER]: "scoped",
        [wire.EGRESS_METHOD_HEADER]: "GET",
        [wire.EGRESS_PATH_HEADER]: encodeURIComponent(path),
      },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; path: string } };
    expect(body.error.code).toMatch(/^egress_path_(outside_prefix|invalid)$/);
    expect(body.error.path).toBe("path");
    expect(origin.received.length).toBe(sent);
    // And connection.fetch refuses it before it leaves agent code.
    const early = await runWithEgress(gateway.issue(claims), () => scoped.fetch(path)).then(
      () => undefined,
      (e: unknown) => e as EgressError,
    );
    expect(early?.code).toMatch(/^egress_path_/);
  });
});
