import { useModel } from "@opencomputer/agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHandler, createStaticKeyAuth } from "../src/index.ts";
import { KEY, startServer, type TestServer } from "./helpers.ts";

function agent() {
  useModel("script/test");
  return "Answer.";
}

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ agents: { agent }, handler: { maxBodyBytes: 64 * 1024 } });
});
afterAll(async () => {
  expect(s.errors).toEqual([]);
  await s.close();
});

const errorOf = async (res: Response) =>
  ((await res.json()) as { error: Record<string, string> }).error;

describe("auth", () => {
  it("401 unauthorized without a key or with an unknown one, on every route", async () => {
    for (const headers of [{ "x-api-key": "" }, { "x-api-key": "wrong" }]) {
      for (const [method, path] of [
        ["GET", "/sessions"],
        ["POST", "/sessions"],
        ["GET", "/nowhere"],
      ] as const) {
        const res = await s.call(method, path, {
          headers,
          body: method === "POST" ? {} : undefined,
        });
        expect(res.status).toBe(401);
        expect(await errorOf(res)).toEqual({ code: "unauthorized", message: expect.any(String) });
      }
    }
    expect(
      (await s.call("GET", "/sessions", { headers: { "x-api-key": "test-key-2" } })).status,
    ).toBe(200);
  });

  it("createStaticKeyAuth knows only its keys", async () => {
    const auth = createStaticKeyAuth(["a", "b"], "p1");
    expect(await auth.verify("b")).toEqual({ projectId: "p1" });
    expect(await auth.verify("c")).toBeNull();
  });
});

describe("routing and bodies", () => {
  it("404 not_found for unknown paths, 405 with Allow for wrong methods", async () => {
    for (const path of ["/", "/session", "/sessions/x/y/z/w", "/sessions/%E0%A4%A", "/sessions/"]) {
      const res = await s.call("GET", path);
      expect(res.status, path).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
    const res = await s.call("DELETE", "/sessions");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, GET");
    expect((await errorOf(res)).code).toBe("method_not_allowed");
    const get = await s.call("GET", "/sessions/abc/turns");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("413 body_too_large by Content-Length and by counting a chunked body", async () => {
    const big = JSON.stringify({ agentId: "agent", labels: { a: "x".repeat(70 * 1024) } });
    const declared = await s.call("POST", "/sessions", { body: big });
    expect(declared.status).toBe(413);
    expect((await errorOf(declared)).code).toBe("body_too_large");
    // A stream has no Content-Length: the limit must hold while reading.
    const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const chunked = await fetch(`${s.url}/sessions`, {
      method: "POST",
      headers: { "x-api-key": KEY },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it("400 invalid_json for malformed JSON and bad UTF-8; invalid_input for non-objects", async () => {
    for (const body of ["{", "", "nul", new Uint8Array([0x7b, 0xff, 0x7d])]) {
      const res = await s.call("POST", "/sessions", { body });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_json");
    }
    for (const body of ["null", "[]", "42", '"s"']) {
      const res = await s.call("POST", "/sessions", { body });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_input");
    }
    const deep = `{"agentId":"agent","labels":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    expect((await s.call("POST", "/sessions", { body: deep })).status).toBe(400);
  });

  it("500 with a generic message for unexpected errors, never the internal text", async () => {
    const errors: unknown[] = [];
    const handler = createHandler({
      runtime: {
        sessions: {
          ...s.runtime.sessions,
          projectOf: async () => "default",
          get: async () => {
            throw new Error("SQLITE_CORRUPT at /secret/path");
          },
        },
        approvals: s.runtime.approvals,
      },
      auth: createStaticKeyAuth([KEY]),
      onError: (e) => errors.push(e),
    });
    const res = await handler(
      new Request("http://x/sessions/ses_1", { headers: { "x-api-key": KEY } }),
    );
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret");
    expect(JSON.parse(text).error.code).toBe("internal");
    expect(errors).toHaveLength(1);
  });
});
