import {
  createServer,
  request as forward,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

/** One request the proxy passed on, as the tests check it. */
export interface ProxiedRequest {
  method: string;
  path: string;
  /** The client asked for Server-Sent Events. */
  askedForStream: boolean;
  /** The answer was a stream. */
  streamed: boolean;
  /** The seqs of the event frames passed on whole. */
  forwarded: number[];
  /** The client's connection closed (for a stream: the client went away, or it was cut). */
  closed: boolean;
}

export interface ProxyOptions {
  /** Asks the server for JSON even when the client wants a stream, as an older server answers. */
  noStream?: boolean;
  /** Cuts the first stream after this many event frames, halfway through the next frame. */
  dropAfter?: number;
}

export interface EventsProxy {
  url: string;
  requests: ProxiedRequest[];
  /** The requests for a session's events (stream or JSON). */
  eventRequests(): ProxiedRequest[];
  close(): Promise<void>;
}

const isEventsPath = (path: string) => /^\/sessions\/[^/]+\/events(\?|$)/.test(path);

/** The `after` query parameter of a recorded request's path. */
export const afterOf = (r: ProxiedRequest): number =>
  Number(new URL(r.path, "http://x").searchParams.get("after"));

/**
 * An HTTP proxy in front of the server that records every request and can play an older
 * server (no stream) or a network that drops a stream mid-way.
 */
export async function startEventsProxy(
  upstream: string,
  options: ProxyOptions = {},
): Promise<EventsProxy> {
  const requests: ProxiedRequest[] = [];
  let dropped = false;
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    const accept = String(req.headers.accept ?? "");
    const record: ProxiedRequest = {
      method: req.method ?? "GET",
      path,
      askedForStream: accept.includes("text/event-stream"),
      streamed: false,
      forwarded: [],
      closed: false,
    };
    requests.push(record);
    const headers = { ...req.headers };
    delete headers.host;
    if (options.noStream && isEventsPath(path)) headers.accept = "application/json";
    const out = forward(`${upstream}${path}`, { method: record.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      record.streamed = String(answer.headers["content-type"]).startsWith("text/event-stream");
      if (!record.streamed) {
        answer.pipe(res);
        return;
      }
      res.flushHeaders();
      const cut = options.dropAfter !== undefined && !dropped;
      if (cut) dropped = true;
      relayFrames(answer, record, res, cut ? options.dropAfter! : null);
      answer.on("end", () => res.end());
    });
    out.on("error", () => res.destroy());
    res.on("close", () => {
      record.closed = true;
      out.destroy();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    eventRequests: () => requests.filter((r) => isEventsPath(r.path)),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Passes an SSE answer on frame by frame, recording each event's seq. With `dropAfter`, after
 * that many events it sends half of the next frame and cuts the connection.
 */
function relayFrames(
  answer: IncomingMessage,
  record: ProxiedRequest,
  res: ServerResponse,
  dropAfter: number | null,
): void {
  answer.setEncoding("utf8");
  let pending = "";
  answer.on("data", (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf("\n\n"); end !== -1; end = pending.indexOf("\n\n")) {
      const frame = pending.slice(0, end + 2);
      pending = pending.slice(end + 2);
      const id = /^id: (\d+)$/m.exec(frame)?.[1];
      if (id !== undefined && dropAfter !== null && record.forwarded.length >= dropAfter) {
        answer.destroy();
        // Cut once the half frame has gone out, so the client really receives a partial frame.
        res.write(frame.slice(0, Math.floor(frame.length / 2)), () => res.destroy());
        return;
      }
      res.write(frame);
      if (id !== undefined) record.forwarded.push(Number(id));
    }
  });
}
