// The egress context is entered by the runtime's copy of the SDK and read by the author's copy:
// both must see the same context. A local server stands in for the gateway and records what
// connection.fetch sends it.

import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as publicA from "../src/index.ts";
import * as internalA from "../src/internal.ts";

// One copy is both entries of the package: the author's and the runtime's.
const copyA = { ...publicA, ...internalA };

const here = dirname(fileURLToPath(import.meta.url));
let dir: string;
let copyB: typeof copyA;
let server: Server;
let url: string;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "opencomputer-agent-egress-"));
  cpSync(join(here, "../src"), join(dir, "src"), { recursive: true });
  mkdirSync(join(dir, "node_modules"));
  const ajv = dirname(fileURLToPath(import.meta.resolve("ajv/package.json")));
  symlinkSync(ajv, join(dir, "node_modules/ajv"), "dir");
  const load = (entry: string) => import(pathToFileURL(join(dir, "src", entry)).href);
  copyB = { ...(await load("index.ts")), ...(await load("internal.ts")) } as typeof copyA;
  server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    const { egressWire: w } = copyA;
    res.writeHead(200, {
      [w.EGRESS_STATUS_HEADER]: "202",
      [w.EGRESS_STATUS_TEXT_HEADER]: "Accepted",
      [w.EGRESS_HEADERS_HEADER]: w.encodeHeaderPairs([["x-upstream", "1"]]),
    });
    res.end("hello");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s/ses_1`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the egress context", () => {
  it("entered by one copy is what the other copy's connection uses", async () => {
    expect(copyB.runWithEgress).not.toBe(copyA.runWithEgress);
    const connection = copyB.defineConnection({ id: "api", origin: "https://api.example" });
    const response = await copyA.runWithEgress({ gatewayUrl: url, token: "tok_1" }, () =>
      connection.fetch("/v1/items?x=1", { method: "POST", body: "{}", headers: { "x-a": "b" } }),
    );
    expect(response.status).toBe(202);
    expect(response.statusText).toBe("Accepted");
    expect(response.headers.get("x-upstream")).toBe("1");
    expect(await response.text()).toBe("hello");
    const headers = seen.at(-1)!;
    const w = copyA.egressWire;
    expect(headers[w.EGRESS_TOKEN_HEADER]).toBe("tok_1");
    expect(headers[w.EGRESS_CONNECTION_HEADER]).toBe("api");
    expect(headers[w.EGRESS_METHOD_HEADER]).toBe("POST");
    expect(decodeURIComponent(String(headers[w.EGRESS_PATH_HEADER]))).toBe("/v1/items?x=1");
    expect(w.decodeHeaderPairs(String(headers[w.EGRESS_HEADERS_HEADER]))).toContainEqual([
      "x-a",
      "b",
    ]);
  });

  it("follows async work started inside it and ends with it", async () => {
    const connection = copyA.defineConnection({ id: "api", origin: "https://api.example" });
    const inner = await copyA.runWithEgress({ gatewayUrl: url, token: "tok_2" }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      return connection.fetch("/later");
    });
    expect(inner.status).toBe(202);
    expect(seen.at(-1)![copyA.egressWire.EGRESS_TOKEN_HEADER]).toBe("tok_2");
    await expect(connection.fetch("/after")).rejects.toMatchObject({ code: "egress_unavailable" });
  });

  it("a gateway refusal becomes an EgressError with the gateway's code and path", async () => {
    const refusing = createServer((req, res) => {
      req.resume();
      res.writeHead(403, {
        [copyA.egressWire.EGRESS_ERROR_HEADER]: "1",
        "content-type": "application/json",
      });
      res.end(
        JSON.stringify({
          error: {
            code: "egress_connection_unknown",
            message: "no such connection",
            path: "connection",
          },
        }),
      );
    });
    await new Promise<void>((r) => refusing.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (refusing.address() as AddressInfo).port;
      const connection = copyA.defineConnection({ id: "api", origin: "https://api.example" });
      const error = await copyA
        .runWithEgress({ gatewayUrl: `http://127.0.0.1:${port}/s/x`, token: "t" }, () =>
          connection.fetch("/"),
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(copyB.EgressError);
      expect(error).toMatchObject({
        code: "egress_connection_unknown",
        details: { path: "connection", status: 403 },
      });
    } finally {
      await new Promise<void>((r) => refusing.close(() => r()));
    }
  });
});
