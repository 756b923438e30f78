import {
  bearer,
  type Connection,
  defineConnection,
  EgressError,
  useSecret,
} from "@opencomputer/agent";
import {
  connectionDeclaration,
  runWithEgress,
  egressWire as wire,
} from "@opencomputer/agent/internal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEgressGateway, type EgressEvent, type EgressGateway } from "../src/index.ts";
import { type Origin, startOrigin, until } from "./origin.ts";

const SECRET = "sk_test_5f1c0ffee_do_not_leak";
let origin: Origin;
let gateway: EgressGateway;
let billing: Connection;
let wide: Connection;
const events: Array<{ sessionId: string } & EgressEvent> = [];
const logged: string[] = [];

beforeAll(async () => {
  origin = await startOrigin();
  billing = defineConnection({
    id: "billing",
    origin: origin.url,
    headers: { authorization: bearer(useSecret("BILLING_KEY")), "x-client": "opencomputer" },
    methods: ["GET", "POST"],
    pathPrefix: "/v1",
  });
  // Declares every method and the whole origin, to reach the gateway's own checks.
  wide = defineConnection({
    id: "wide",
    origin: origin.url,
    headers: { "x-api-key": useSecret("BILLING_KEY") },
  });
  const declared = [
    billing,
    wide,
    defineConnection({
      id: "nokey",
      origin: origin.url,
      headers: { authorization: bearer(useSecret("MISSING_KEY")) },
    }),
  ];
  gateway = createEgressGateway({
    devMode: true,
    secrets: {
      resolve: async (env, name) =>
        env === "development" && name === "BILLING_KEY" ? SECRET : undefined,
    },
    connections: ({ agentId }) =>
      agentId === "billing_agent" ? declared.map(connectionDeclaration) : [],
    events: (sessionId, event) => void events.push({ sessionId, ...event }),
    log: { error: (message, fields) => void logged.push(JSON.stringify({ message, fields })) },
  });
  await gateway.listen();
});

afterAll(async () => {
  await gateway.close();
  await origin.close();
});

const claims = { agentId: "billing_agent", environment: "development" };
function inSession<T>(
  sessionId: string,
  fn: () => Promise<T>,
  extra: Partial<typeof claims> & { ttlMs?: number; signal?: AbortSignal } = {},
) {
  const { signal, ...rest } = extra;
  const ctx = gateway.issue({ sessionId, ...claims, turnId: "turn_1", ...rest });
  return runWithEgress({ ...ctx, ...(signal ? { signal } : {}) }, fn);
}
async function failure(promise: Promise<unknown>): Promise<EgressError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EgressError);
  return error as EgressError;
}
/** A request straight to the gateway, skipping connection.fetch's own checks. */
function raw(sessionId: string, headers: Record<string, string>, body?: Uint8Array) {
  const token = gateway.issueToken(sessionId, claims);
  return fetch(gateway.sessionUrl(sessionId), {
    method: "POST",
    headers: {
      [wire.EGRESS_TOKEN_HEADER]: token,
      [wire.EGRESS_CONNECTION_HEADER]: "wide",
      [wire.EGRESS_METHOD_HEADER]: "GET",
      [wire.EGRESS_PATH_HEADER]: "/v1/echo",
      ...headers,
    },
    ...(body ? { body } : {}),
  });
}

describe("the egress gateway", () => {
  it("adds the secret header on the way to the origin and nowhere else", async () => {
    const before = origin.received.length;
    const response = await inSession("ses_a", () =>
      billing.fetch("/v1/echo?q=1", {
        headers: { accept: "application/json", "x-client": "forged" },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-origin")).toBe("yes");
    expect(response.headers.get("set-cookie")).toBeNull();
    const body = await response.text();
    expect(JSON.parse(body)).toMatchObject({ method: "GET", url: "/v1/echo?q=1" });
    const got = origin.received[before]!;
    expect(got.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(got.headers["x-client"]).toBe("opencomputer"); // declared headers win
    expect(got.headers.accept).toBe("application/json");
    const mine = events.filter((e) => e.sessionId === "ses_a");
    expect(mine.map((e) => e.type)).toEqual(["egress.request", "egress.response"]);
    expect(mine[0]).toMatchObject({
      turnId: "turn_1",
      data: { connectionId: "billing", method: "GET", path: "/v1/echo" },
    });
    expect(mine[1]!.data).toMatchObject({ connectionId: "billing", status: 200 });
    expect(typeof mine[1]!.data.durationMs).toBe("number");
    for (const text of [
      body,
      JSON.stringify([...response.headers]),
      JSON.stringify(events),
      logged.join("\n"),
    ]) {
      expect(text).not.toContain(SECRET);
    }
  });

  it("sends bodies and returns the origin's status; decoded bodies and empty answers pass", async () => {
    const created = await inSession("ses_b", () =>
      billing.fetch("/v1/invoices", {
        method: "POST",
        body: JSON.stringify({ amount: 5 }),
        headers: { "content-type": "application/json", "idempotency-key": "ses_b:call_1" },
      }),
    );
    expect(created.status).toBe(201);
    const got = origin.received.at(-1)!;
    expect(got.body).toBe('{"amount":5}');
    expect(got.headers["idempotency-key"]).toBe("ses_b:call_1");
    expect(got.headers["content-type"]).toBe("application/json");
    const gz = await inSession("ses_b", () => billing.fetch("/v1/gzip"));
    expect(await gz.text()).toBe("compressed hello");
    const empty = await inSession("ses_b", () => billing.fetch("/v1/empty"));
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe("");
  });

  it("refuses another session's token", async () => {
    const token = gateway.issueToken("ses_other", claims);
    const error = await failure(
      runWithEgress({ gatewayUrl: gateway.sessionUrl("ses_mine"), token }, () =>
        billing.fetch("/v1/echo"),
      ),
    );
    expect(error.code).toBe("egress_token_session");
  });

  it("refuses an expired token and a forged one", async () => {
    expect(
      (await failure(inSession("ses_c", () => billing.fetch("/v1/echo"), { ttlMs: 0 }))).code,
    ).toBe("egress_token_expired");
    const token = gateway.issueToken("ses_c", claims);
    const [v, payload, mac] = token.split(".");
    const forgedPayload = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(payload!, "base64url").toString()),
        agentId: "x",
      }),
    ).toString("base64url");
    for (const bad of [`${v}.${forgedPayload}.${mac}`, "nonsense"]) {
      const error = await failure(
        runWithEgress({ gatewayUrl: gateway.sessionUrl("ses_c"), token: bad }, () =>
          billing.fetch("/v1/echo"),
        ),
      );
      expect(error.code).toBe("egress_token_invalid");
    }
  });

  it("refuses an oversized body, in agent code and at the gateway", async () => {
    const big = new Uint8Array(wire.MAX_EGRESS_BODY_BYTES + 1);
    const error = await failure(
      inSession("ses_d", () => billing.fetch("/v1/upload", { method: "POST", body: big })),
    );
    expect(error.code).toBe("egress_body_too_large");
    expect(error.details.path).toBe("init.body");
    const response = await raw("ses_d", { [wire.EGRESS_METHOD_HEADER]: "POST" }, big);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: unknown }).error).toMatchObject({
      code: "egress_body_too_large",
      path: "init.body",
    });
    // Exactly the limit passes.
    const ok = await raw("ses_d", { [wire.EGRESS_METHOD_HEADER]: "POST" }, big.subarray(1));
    expect(JSON.parse(await ok.text())).toMatchObject({ bodyLength: wire.MAX_EGRESS_BODY_BYTES });
  });

  it("refuses bad paths and paths outside the prefix, in agent code and at the gateway", async () => {
    for (const [path, code] of [
      ["v1/echo", "egress_path_invalid"],
      ["//evil.example/v1", "egress_path_invalid"],
      ["/v1/../admin", "egress_path_outside_prefix"],
      ["/admin", "egress_path_outside_prefix"],
    ] as const) {
      const error = await failure(inSession("ses_e", () => billing.fetch(path)));
      expect(error.code).toBe(code);
      expect(error.details.path).toBe("path");
    }
    const sent = origin.received.length;
    for (const path of ["/v1/%2e%2e/admin", "/v1/../admin", "v1"]) {
      const response = await raw("ses_e", {
        [wire.EGRESS_CONNECTION_HEADER]: "billing",
        [wire.EGRESS_PATH_HEADER]: encodeURIComponent(path),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toMatch(
        /^egress_path_/,
      );
    }
    expect(origin.received.length).toBe(sent);
  });

  it("refuses undeclared methods, in agent code and at the gateway", async () => {
    const error = await failure(
      inSession("ses_f", () => billing.fetch("/v1/echo", { method: "DELETE" })),
    );
    expect(error.code).toBe("egress_method_refused");
    expect(error.details.path).toBe("init.method");
    const response = await raw("ses_f", {
      [wire.EGRESS_CONNECTION_HEADER]: "billing",
      [wire.EGRESS_METHOD_HEADER]: "DELETE",
    });
    expect(response.status).toBe(405);
    const failed = events.filter((e) => e.sessionId === "ses_f" && e.type === "egress.failed");
    expect(failed.at(-1)!.data).toMatchObject({ connectionId: "billing", method: "DELETE" });
  });

  it("follows redirects within the origin and prefix only, never sending the secret elsewhere", async () => {
    const followed = await inSession("ses_g", () => billing.fetch("/v1/redirect-same"));
    expect(JSON.parse(await followed.text())).toMatchObject({ url: "/v1/echo?from=redirect" });
    expect(origin.received.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);
    const seeOther = await inSession("ses_g", () =>
      billing.fetch("/v1/see-other", { method: "POST", body: "x" }),
    );
    expect(JSON.parse(await seeOther.text())).toMatchObject({ method: "GET" });

    const sent = origin.received.length;
    const off = await failure(inSession("ses_g", () => billing.fetch("/v1/redirect-off")));
    expect(off.code).toBe("egress_redirect_refused");
    expect(off.message).toContain("another origin");
    const outside = await failure(inSession("ses_g", () => billing.fetch("/v1/redirect-outside")));
    expect(outside.code).toBe("egress_redirect_refused");
    // Only the two redirecting requests reached the server: neither hop was followed.
    expect(origin.received.length).toBe(sent + 2);
    const failed = events.filter((e) => e.sessionId === "ses_g" && e.type === "egress.failed");
    expect(failed.map((e) => e.data.path)).toEqual(["/v1/redirect-off", "/v1/redirect-outside"]);
  });

  it("refuses connections the deployment does not declare", async () => {
    const stranger = defineConnection({ id: "stranger", origin: origin.url });
    expect((await failure(inSession("ses_h", () => stranger.fetch("/")))).code).toBe(
      "egress_connection_unknown",
    );
    const otherAgent = gateway.issue({
      sessionId: "ses_h",
      agentId: "other_agent",
      environment: "development",
    });
    expect((await failure(runWithEgress(otherAgent, () => billing.fetch("/v1/echo")))).code).toBe(
      "egress_connection_unknown",
    );
  });

  it("names a missing secret without any value, and per environment", async () => {
    const nokey = defineConnection({
      id: "nokey",
      origin: origin.url,
      headers: { authorization: bearer(useSecret("MISSING_KEY")) },
    });
    const error = await failure(inSession("ses_i", () => nokey.fetch("/")));
    expect(error.code).toBe("egress_secret_missing");
    expect(error.details.path).toBe("headers.authorization");
    expect(error.message).toContain(
      "opencomputer secrets set MISSING_KEY --environment development",
    );
    const production = await failure(
      inSession("ses_i", () => billing.fetch("/v1/echo"), { environment: "production" }),
    );
    expect(production.code).toBe("egress_secret_missing");
  });

  it("refuses credential headers from agent code", async () => {
    const error = await failure(
      inSession("ses_j", () => wide.fetch("/x", { headers: { Authorization: "Bearer mine" } })),
    );
    expect(error.code).toBe("egress_header_refused");
    expect(error.details.path).toBe("init.headers.authorization");
    const response = await raw("ses_j", {
      [wire.EGRESS_HEADERS_HEADER]: wire.encodeHeaderPairs([["cookie", "a=b"]]),
    });
    expect(response.status).toBe(400);
  });

  it("aborting the agent's signal cancels the origin request", async () => {
    const controller = new AbortController();
    const before = origin.received.length;
    const pending = inSession("ses_k", () => billing.fetch("/v1/slow"), {
      signal: controller.signal,
    });
    await until(() => origin.received.length > before);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await until(() => origin.closedEarly === 1);
    await until(() => events.some((e) => e.sessionId === "ses_k" && e.type === "egress.failed"));
  });
});

describe("outside dev mode", () => {
  it("refuses plain-http origins", async () => {
    const strict = createEgressGateway({
      secrets: { resolve: async () => SECRET },
      connections: () => [connectionDeclaration(billing)],
    });
    await strict.listen();
    try {
      const sent = origin.received.length;
      const error = await failure(
        runWithEgress(strict.issue({ sessionId: "ses_l", ...claims }), () =>
          billing.fetch("/v1/echo"),
        ),
      );
      expect(error.code).toBe("egress_origin_insecure");
      expect(origin.received.length).toBe(sent);
    } finally {
      await strict.close();
    }
  });
});
