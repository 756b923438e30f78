// A local HTTP receiver on loopback whose answers a test scripts one request at a time: a
// status (with headers), or `hang` (no answer until the test releases it). Every request is
// kept with its raw body, path and headers, so a test verifies signatures as a receiver would.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type Answer = { status: number; headers?: Record<string, string> } | { hang: true };

export interface Received {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TestReceiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order; once used up, 200. */
  script(...answers: Answer[]): void;
  /** Answers every hung request with 200 (after the sender gave up, it goes nowhere). */
  release(): void;
  close(): Promise<void>;
}

export async function startReceiver(path = "/oc/events?tenant=acme"): Promise<TestReceiver> {
  const queue: Answer[] = [];
  const received: Received[] = [];
  const hung: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        method: req.method ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const answer = queue.shift() ?? { status: 200 };
      if ("hang" in answer) {
        hung.push(() => res.writeHead(200).end());
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {}).end("ignored body");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    script: (...answers) => queue.push(...answers),
    release: () => {
      for (const end of hung.splice(0)) end();
    },
    close: async () => {
      for (const end of hung.splice(0)) end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
