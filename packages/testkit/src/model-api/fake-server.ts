import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are asserted structurally
  body: any;
}

export type Reply = (res: ServerResponse, req: Received) => void;

/**
 * A provider API on 127.0.0.1 that answers with queued replies (the last one repeats) and records
 * every request, so tests see exactly what went over the wire.
 */
export async function startFakeApi() {
  const received: Received[] = [];
  let replies: Reply[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const request: Received = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      received.push(request);
      const reply = replies.length > 1 ? replies.shift() : replies[0];
      if (reply) reply(res, request);
      else json(404, { error: { message: "no reply queued" } })(res, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    received,
    reply(...next: Reply[]) {
      replies = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
}

/** Server-sent events; `cutAfter` drops the connection after that many events. */
export function sse(events: { event?: string; data: unknown }[], cutAfter?: number): Reply {
  return (res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    events.forEach((e, i) => {
      if (cutAfter !== undefined && i >= cutAfter) return;
      const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data);
      res.write(`${e.event ? `event: ${e.event}\n` : ""}data: ${data}\n\n`);
    });
    if (cutAfter === undefined) res.end();
    else setTimeout(() => res.destroy(), 20);
  };
}

/** Drains a model stream into an array of its parts. */
export async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const parts: T[] = [];
  for await (const part of stream as unknown as AsyncIterable<T>) parts.push(part);
  return parts;
}
