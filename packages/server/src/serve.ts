import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { INTERNAL_ERROR } from "./errors.ts";
import type { Handler } from "./handler.ts";

export interface ServeOptions {
  port: number;
  hostname?: string;
}

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Builds the web Request; its signal aborts when the client goes away (ends SSE streams). */
function toRequest(req: IncomingMessage, base: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", base), {
    method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

async function send(
  response: Response,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  // A body left unread (a 413, or a route that takes none) would be parsed as the next request
  // on a kept-alive connection: close it instead.
  if (!req.complete) headers.connection = "close";
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const setCookies = response.headers.getSetCookie();
  if (setCookies.length) headers["set-cookie"] = setCookies;
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // Streams (SSE) must reach the client as soon as the handler produces them.
  res.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  signal.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      if (signal.aborted) break;
    }
    res.end();
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

/** Serves `handler` over node:http; resolves once listening (port 0 picks a free port). */
export async function serve(handler: Handler, options: ServeOptions): Promise<Served> {
  const hostname = options.hostname ?? "127.0.0.1";
  const server = createServer((req, res) => {
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    void (async () => {
      let request: Request;
      try {
        // A fixed base: routing uses only the path, and a hostile Host header cannot break parsing.
        request = toRequest(req, "http://localhost", abort.signal);
      } catch {
        // An unparseable URL or Host: not something the handler can reason about.
        if (!res.headersSent) {
          res.writeHead(400, { "content-type": "application/json; charset=utf-8" });
          res.end(
            JSON.stringify({ error: { code: "invalid_request", message: "Malformed request" } }),
          );
        }
        return;
      }
      try {
        await send(await handler(request), req, res, abort.signal);
      } catch {
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
          res.end(JSON.stringify(INTERNAL_ERROR));
        } else res.destroy();
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, hostname, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Open SSE streams and idle keep-alive sockets would otherwise hold close() forever.
        server.closeAllConnections();
      }),
  };
}
