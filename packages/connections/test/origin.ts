// A loopback origin that records every request it receives, for the gateway tests.

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface Origin {
  url: string;
  /** The same server under another origin (localhost instead of 127.0.0.1). */
  otherUrl: string;
  received: Received[];
  /** Requests to /v1/slow whose connection closed before an answer. */
  closedEarly: number;
  close(): Promise<void>;
}

export async function startOrigin(): Promise<Origin> {
  const received: Received[] = [];
  const state = { closedEarly: 0 };
  let port = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    });
    const path = (req.url ?? "").split("?")[0];
    switch (path) {
      case "/v1/redirect-same":
        res.writeHead(302, { location: "/v1/echo?from=redirect" }).end();
        return;
      case "/v1/redirect-off":
        res.writeHead(302, { location: `http://localhost:${port}/v1/echo` }).end();
        return;
      case "/v1/redirect-outside":
        res.writeHead(307, { location: "/admin" }).end();
        return;
      case "/v1/see-other":
        res.writeHead(303, { location: "/v1/echo" }).end();
        return;
      case "/v1/gzip":
        res.writeHead(200, { "content-encoding": "gzip", "content-type": "text/plain" });
        res.end(gzipSync("compressed hello"));
        return;
      case "/v1/empty":
        res.writeHead(204).end();
        return;
      case "/v1/slow":
        res.on("close", () => {
          if (!res.writableFinished) state.closedEarly++;
        });
        return; // never answers
      default:
        res.writeHead(req.method === "POST" ? 201 : 200, {
          "content-type": "application/json",
          "x-origin": "yes",
          "set-cookie": "session=abc",
        });
        // Only what is not a credential: the test checks the secret arrives here and nowhere else.
        res.end(
          JSON.stringify({
            method: req.method,
            url: req.url,
            bodyLength: Buffer.concat(chunks).length,
          }),
        );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    otherUrl: `http://localhost:${port}`,
    received,
    get closedEarly() {
      return state.closedEarly;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
