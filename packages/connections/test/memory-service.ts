// A loopback memory service speaking the HTTP memory provider protocol (docs/memory.md), for the
// runtime's HTTP memory tests. It refuses requests without the expected bearer token, keeps facts
// per partition, and lets a test choose how it answers the next operations (garbage, too large,
// a conflict, silence).

import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ServiceRequest {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** How the service answers an operation instead of following the protocol. */
export type Misbehaviour = "garbage" | "huge" | "conflict" | "silent" | "unavailable" | "echo";

export interface MemoryService {
  url: string;
  received: ServiceRequest[];
  /** Facts by partition. */
  facts: Map<string, string[]>;
  /** Misbehaviours for the next operations of a kind, used up one per request. */
  misbehave: { recall: Misbehaviour[]; tool: Misbehaviour[] };
  close(): Promise<void>;
}

export async function startMemoryService(token: string): Promise<MemoryService> {
  const received: ServiceRequest[] = [];
  const facts = new Map<string, string[]>();
  const misbehave = { recall: [] as Misbehaviour[], tool: [] as Misbehaviour[] };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    if (req.headers.authorization !== `Bearer ${token}`) {
      json(401, { error: { code: "unauthorized", message: "a valid bearer token is required" } });
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    received.push({ headers: req.headers, body });
    const partition = String(body.partition);
    const kind = body.operation === "recall" ? "recall" : "tool";
    const odd = misbehave[kind].shift();
    if (odd === "garbage") return void res.writeHead(200).end("<html>not json</html>");
    if (odd === "huge") return void json(200, { text: "x".repeat(70 * 1024), sources: [] });
    if (odd === "unavailable") return void json(503, { error: { code: "busy", message: "later" } });
    if (odd === "echo") {
      // A careless service quoting the request's credential in its error.
      return void json(400, {
        error: { code: "bad", message: `rejected ${req.headers.authorization}` },
      });
    }
    if (odd === "silent") return; // never answers; the runtime's deadline ends the request
    if (odd === "conflict") {
      return void json(409, {
        error: { code: "conflict", message: "Knowledge changed; reconcile the current facts." },
      });
    }
    const kept = facts.get(partition) ?? [];
    if (body.operation === "recall") {
      return void json(200, {
        text: kept.join("\n"),
        sources: kept.map((_, i) => ({ id: `fact:${i}`, title: `Fact ${i + 1}` })),
        cursor: `snapshot-${kept.length}`,
      });
    }
    const args = body.arguments as { fact?: string; query?: string };
    if (body.tool === "remember") {
      if (body.access !== "read-write") {
        return void json(403, { error: { code: "read_only", message: "read-only binding" } });
      }
      facts.set(partition, [...kept, String(args.fact)]);
      return void json(200, { result: { status: "stored", revision: `r${kept.length + 1}` } });
    }
    const hits = kept.filter((f) => f.includes(String(args.query ?? "")));
    return void json(200, { result: { facts: hits } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    facts,
    misbehave,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
