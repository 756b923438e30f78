import { describe, expect, it } from "vitest";
import {
  bearer,
  ConnectionDefinitionError,
  defineConnection,
  EgressError,
  SecretReferenceError,
  secretHeader,
  useSecret,
} from "../src/index.ts";
import { checkEgressPath, connectionDeclaration, isConnection } from "../src/internal.ts";
import { expectFailure, thrown } from "./helpers.ts";

const ok = { id: "billing", origin: "https://api.billing.example" };
// biome-ignore lint/suspicious/noExplicitAny: deliberately ill-typed input, as plain JS could pass
const loose = (definition: unknown) => () => defineConnection(definition as any);

function refused(definition: unknown, path: string, ...fragments: string[]) {
  const error = expectFailure(
    loose(definition),
    ConnectionDefinitionError,
    "connection_invalid",
    ...fragments,
  );
  expect(error.details.path).toBe(path);
  return error;
}

describe("defineConnection", () => {
  it("records a declaration with secret references, never values", () => {
    const connection = defineConnection({
      ...ok,
      origin: "https://api.billing.example/",
      headers: {
        Authorization: bearer(useSecret("BILLING_KEY")),
        "X-Tenant": secretHeader(useSecret("TENANT"), { prefix: "t=", suffix: ";" }),
        "X-Api-Key": useSecret("OTHER_KEY"),
        accept: "application/json",
      },
      methods: ["GET", "POST"],
      pathPrefix: "/v1",
    });
    expect(isConnection(connection)).toBe(true);
    expect(Object.isFrozen(connection)).toBe(true);
    expect(connectionDeclaration(connection)).toEqual({
      id: "billing",
      origin: "https://api.billing.example",
      headers: {
        authorization: { secret: "BILLING_KEY", prefix: "Bearer " },
        "x-tenant": { secret: "TENANT", prefix: "t=", suffix: ";" },
        "x-api-key": { secret: "OTHER_KEY" },
        accept: "application/json",
      },
      methods: ["GET", "POST"],
      pathPrefix: "/v1",
    });
  });

  it("defaults methods to every standard method and pathPrefix to /", () => {
    const c = defineConnection(ok);
    expect(c.methods).toEqual(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
    expect(c.pathPrefix).toBe("/");
    expect(c.headers).toEqual({});
  });

  it("accepts plain http only to loopback (the gateway allows it in dev mode)", () => {
    expect(defineConnection({ ...ok, origin: "http://127.0.0.1:8080" }).origin).toBe(
      "http://127.0.0.1:8080",
    );
    expect(defineConnection({ ...ok, origin: "http://localhost:3000" }).origin).toBe(
      "http://localhost:3000",
    );
    refused({ ...ok, origin: "http://api.billing.example" }, "origin", "must use https");
    refused({ ...ok, origin: "ftp://127.0.0.1" }, "origin", "must use https");
  });

  it("refuses an origin with a path, query, fragment or credentials", () => {
    refused({ ...ok, origin: "https://api.billing.example/v1" }, "origin", "without a path");
    refused({ ...ok, origin: "https://api.billing.example?x=1" }, "origin", "without a path");
    refused({ ...ok, origin: "https://api.billing.example/#x" }, "origin", "without a path");
    refused({ ...ok, origin: "https://user:pw@api.billing.example" }, "origin", "credentials");
    refused({ ...ok, origin: "not a url" }, "origin", "not a URL");
    refused({ id: "billing" }, "origin", "must be a string");
  });

  it("refuses a bad id", () => {
    refused({ ...ok, id: "1abc" }, "id", '"id" must be');
    refused({ ...ok, id: undefined }, "id");
    refused({ ...ok, id: "a".repeat(65) }, "id");
  });

  it("refuses unknown keys with a suggestion", () => {
    refused({ ...ok, header: {} }, "header", 'did you mean "headers"');
  });

  for (const name of ["authorization", "Cookie", "x-api-key", "api-key", "Proxy-Authorization"]) {
    it(`refuses a literal ${name} header`, () => {
      refused(
        { ...ok, headers: { [name]: "Bearer sk_live_123" } },
        `headers.${name}`,
        "credential",
        "useSecret",
      );
    });
  }

  it("refuses bad header names and values", () => {
    refused({ ...ok, headers: { "bad name": "x" } }, "headers.bad name", "not a valid header name");
    refused({ ...ok, headers: { "x-a": "a\r\nb" } }, "headers.x-a", "line breaks");
    refused({ ...ok, headers: { "x-a": 42 } }, "headers.x-a", "must be a string");
    refused({ ...ok, headers: { "x-a": { secret: "FAKE" } } }, "headers.x-a");
    refused({ ...ok, headers: { "X-A": "1", "x-a": "2" } }, "headers.x-a", "twice");
    refused({ ...ok, headers: [] }, "headers");
  });

  it("refuses undeclarable methods", () => {
    refused({ ...ok, methods: ["GET", "get"] }, "methods[1]", '"get" is not one of');
    refused({ ...ok, methods: ["TRACE"] }, "methods[0]");
    refused({ ...ok, methods: [] }, "methods", "non-empty");
    refused({ ...ok, methods: "GET" }, "methods");
  });

  it("refuses a pathPrefix that is not a clean absolute path", () => {
    for (const prefix of ["v1", "//v1", "/v1/../admin", "/v1?x", "/a b", "/v1\\x"]) {
      refused({ ...ok, pathPrefix: prefix }, "pathPrefix", "pathPrefix");
    }
  });

  it("refuses fetch outside an egress context (agent code outside a tool call)", async () => {
    const c = defineConnection(ok);
    const error = await c.fetch("/v1/x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressError);
    expect((error as EgressError).code).toBe("egress_unavailable");
  });
});

describe("secret references", () => {
  it("carry the name only", () => {
    const ref = useSecret("STRIPE_KEY");
    expect(ref.name).toBe("STRIPE_KEY");
    expect(String(ref)).toBe("[secret STRIPE_KEY]");
    expect(bearer(ref)).toEqual({ secret: "STRIPE_KEY", prefix: "Bearer ", suffix: "" });
  });

  it("refuse a bad name, naming the argument", () => {
    for (const name of ["stripe_key", "1KEY", "", `A${"B".repeat(128)}`, "KEY-1"]) {
      const error = expectFailure(
        () => useSecret(name),
        SecretReferenceError,
        "secret_name_invalid",
      );
      expect(error.details.path).toBe("name");
    }
    expect(useSecret(`A${"B".repeat(127)}`).name).toHaveLength(128);
  });

  it("secretHeader needs a reference and clean affixes", () => {
    const e1 = thrown(() => secretHeader({ name: "FAKE" } as never));
    expect(e1.code).toBe("secret_reference_invalid");
    expect(e1.details.path).toBe("secret");
    const e2 = thrown(() => secretHeader(useSecret("K"), { prefix: "a\nb" }));
    expect(e2.details.path).toBe("options.prefix");
  });
});

describe("checkEgressPath", () => {
  const path = (p: unknown, prefix = "/") => checkEgressPath(p, prefix);

  it("resolves dot segments, including encoded ones, and keeps the query", () => {
    expect(path("/v1/a/../b?x=1")).toEqual({ ok: true, path: "/v1/b?x=1" });
    expect(path("/v1/./c/")).toEqual({ ok: true, path: "/v1/c/" });
    expect(path("/v1/a/%2e%2E/b", "/v1")).toEqual({ ok: true, path: "/v1/b" });
  });

  it("refuses paths that escape or leave the prefix", () => {
    expect(path("/v1/../admin", "/v1")).toMatchObject({
      ok: false,
      code: "egress_path_outside_prefix",
    });
    expect(path("/v1/%2e%2e/admin", "/v1")).toMatchObject({
      ok: false,
      code: "egress_path_outside_prefix",
    });
    expect(path("/v10", "/v1")).toMatchObject({ ok: false, code: "egress_path_outside_prefix" });
    expect(path("/v1", "/v1/")).toEqual({ ok: true, path: "/v1" });
    expect(path("/..")).toMatchObject({ ok: false, code: "egress_path_invalid" });
  });

  it("refuses malformed paths", () => {
    for (const p of [
      "v1",
      "//evil.example/x",
      "https://evil.example/",
      "/a\\b",
      "/a%2fb",
      "/a b",
      "/a#b",
      "/a\nb",
      5,
    ]) {
      expect(path(p)).toMatchObject({ ok: false, code: "egress_path_invalid" });
    }
  });
});
