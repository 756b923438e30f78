// An origin that echoes the request back must not hand the secret to agent code: the gateway
// replaces every echo of the value (as sent, with its `Bearer ` prefix or declared suffix,
// percent-, JSON- and base64-encoded) in the status text, the headers and the body — also when
// the body streams in small chunks that split the value.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bearer, defineConnection, secretHeader, useSecret } from "@opencomputer/agent";
import { connectionDeclaration, runWithEgress } from "@opencomputer/agent/internal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEgressGateway,
  type EgressEvent,
  type EgressGateway,
  echoForms,
  SECRET_MARKER,
} from "../src/index.ts";
import { redactingStream } from "../src/redact.ts";

const SECRET = "sk_echo_5e4f/3a+2b=1c_never_back";
const KEY = "key-7b1d9e0c44aa";
let server: Server;
let gateway: EgressGateway;
let url: string;
const events: EgressEvent[] = [];

/** Writes `text` a few bytes at a time, each write in its own turn of the event loop. */
async function trickle(res: import("node:http").ServerResponse, text: string, size: number) {
  for (let i = 0; i < text.length; i += size) {
    res.write(text.slice(i, i + size));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    for await (const _ of req);
    const auth = String(req.headers.authorization ?? "");
    const key = String(req.headers["x-api-key"] ?? "");
    res.writeHead(200, `echo ${auth}`, {
      "content-type": "application/json",
      "x-echo-authorization": auth,
      "x-echo-key": key,
    });
    const body = JSON.stringify({
      headers: req.headers,
      basic: Buffer.from(`user:${SECRET}`).toString("base64"),
      b64url: Buffer.from(`xx${SECRET}yy`).toString("base64url"),
      query: `token=${encodeURIComponent(SECRET)}`,
      escaped: JSON.stringify({ auth }),
    });
    await trickle(res, body, req.url === "/trickle" ? 5 : body.length);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const echo = defineConnection({
    id: "echo",
    origin: url,
    headers: {
      authorization: bearer(useSecret("ECHO_TOKEN")),
      "x-api-key": secretHeader(useSecret("ECHO_KEY"), { prefix: "k=", suffix: ";v1" }),
    },
  });
  gateway = createEgressGateway({
    devMode: true,
    secrets: {
      resolve: async (_env, name) =>
        name === "ECHO_TOKEN" ? SECRET : name === "ECHO_KEY" ? KEY : undefined,
    },
    connections: () => [connectionDeclaration(echo)],
    events: (_sessionId, event) => void events.push(event),
  });
  await gateway.listen();
});

afterAll(async () => {
  await gateway.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function call(path: string) {
  const echo = defineConnection({ id: "echo", origin: url });
  const ctx = gateway.issue({ sessionId: "ses_echo", agentId: "a", environment: "development" });
  return runWithEgress(ctx, async () => {
    const response = await echo.fetch(path);
    return {
      status: response.status,
      statusText: response.statusText,
      headers: JSON.stringify([...response.headers]),
      body: await response.text(),
    };
  });
}

describe("echoed secrets", () => {
  for (const path of ["/whole", "/trickle"]) {
    it(`are replaced in status text, headers and body (${path})`, async () => {
      const got = await call(path);
      expect(got.status).toBe(200);
      const everything = [got.statusText, got.headers, got.body, JSON.stringify(events)];
      for (const text of everything) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(KEY);
        for (const form of echoForms([SECRET, KEY])) expect(text).not.toContain(String(form));
      }
      expect(got.statusText).toBe(`echo Bearer ${SECRET_MARKER}`);
      expect(got.headers).toContain(`"x-echo-key","k=${SECRET_MARKER};v1"`);
      const body = JSON.parse(got.body) as Record<string, unknown> & {
        headers: Record<string, string>;
      };
      expect(body.headers.authorization).toBe(`Bearer ${SECRET_MARKER}`);
      expect(body.headers["x-api-key"]).toBe(`k=${SECRET_MARKER};v1`);
      expect(body.query).toBe(`token=${SECRET_MARKER}`);
      expect(String(body.escaped)).toContain(SECRET_MARKER);
      expect(String(body.basic)).toContain(SECRET_MARKER);
      expect(String(body.b64url)).toContain(SECRET_MARKER);
    });
  }
});

describe("the redacting stream", () => {
  const forms = echoForms([SECRET]);
  async function run(chunks: string[]): Promise<string> {
    const stream = redactingStream(forms);
    const out: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => out.push(chunk));
    const ended = new Promise((resolve) => stream.on("end", resolve));
    for (const chunk of chunks) stream.write(Buffer.from(chunk));
    stream.end();
    await ended;
    return Buffer.concat(out).toString("utf8");
  }

  it("catches a value split at any byte", async () => {
    const text = `before Bearer ${SECRET} after`;
    const expected = `before Bearer ${SECRET_MARKER} after`;
    for (let cut = 1; cut < text.length; cut++) {
      expect(await run([text.slice(0, cut), text.slice(cut)])).toBe(expected);
    }
    expect(await run([...text])).toBe(expected);
  });

  it("holds back only bytes that could begin a value", async () => {
    const stream = redactingStream(forms);
    const seen: string[] = [];
    stream.on("data", (chunk: Buffer) => seen.push(chunk.toString("utf8")));
    stream.write(Buffer.from("data: no secret here\n\n"));
    stream.write(Buffer.from("data: sk_e"));
    await new Promise((resolve) => setImmediate(resolve));
    // The first event passes at once; "sk_e" waits: it may be the start of the value.
    expect(seen.join("")).toBe("data: no secret here\n\ndata: ");
    stream.end(Buffer.from("cho_other\n"));
    await new Promise((resolve) => stream.on("end", resolve));
    expect(seen.join("")).toBe("data: no secret here\n\ndata: sk_echo_other\n");
  });
});
