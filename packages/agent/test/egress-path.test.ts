// Origins read more than `..` as "the parent": servlet containers (Tomcat, Jetty) drop a `;`
// path parameter before resolving, so `/v1/..;/admin` is `/admin` there. Every spelling of a dot
// segment must be resolved, and refused above the prefix, exactly like `..`.

import { describe, expect, it } from "vitest";
import { checkEgressPath } from "../src/internal.ts";

const escapes = [
  "/v1/..;/admin",
  "/v1/..;jsessionid=x/admin",
  "/v1/%2e%2e;/admin",
  "/v1/%2E%2e;/admin",
  "/v1/%2e.;/admin",
  "/v1/.%2E/admin",
  "/v1/..%3b/admin",
  "/v1/..%3B/admin",
  "/v1/x/..;/..;/admin",
  "/v1/x/.;/..;/..;/admin",
];

describe("dot segments in every spelling", () => {
  it.each(escapes)("%s cannot leave the prefix", (path) => {
    expect(checkEgressPath(path, "/v1")).toMatchObject({
      ok: false,
      code: "egress_path_outside_prefix",
    });
  });

  it("`.;` is the current directory and `..;` the parent, as an origin reads them", () => {
    expect(checkEgressPath("/v1/.;/a", "/v1")).toEqual({ ok: true, path: "/v1/a" });
    expect(checkEgressPath("/v1/a/..;/b", "/v1")).toEqual({ ok: true, path: "/v1/b" });
    expect(checkEgressPath("/v1/a;v=2/b", "/v1")).toEqual({ ok: true, path: "/v1/a;v=2/b" });
  });

  it("above the root, `..;` is refused like `..`", () => {
    for (const path of ["/..;/x", "/%2e%2e;/x", "/..%3b/x"]) {
      expect(checkEgressPath(path, "/")).toMatchObject({ ok: false, code: "egress_path_invalid" });
    }
  });

  it("encoded separators stay refused in any case", () => {
    for (const path of ["/v1/..%2fadmin", "/v1/..%2Fadmin", "/v1/%5c..", "/v1/a%00"]) {
      expect(checkEgressPath(path, "/v1")).toMatchObject({
        ok: false,
        code: "egress_path_invalid",
      });
    }
  });
});
