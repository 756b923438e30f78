// A real MCP server made with the official SDK, in the test process (`@opencomputer/testkit/mcp-server`): McpServer over the
// Streamable HTTP server transport (stateful: a session per client, so a cancellation reaches the
// request it cancels) on node:http.
// Tools: `search` (an input schema), `lookup` (structured output), `explode` (throws), `slow`
// (reports progress, then waits until it is cancelled or released). With `bearer` it answers
// 401 to any request without `Authorization: Bearer <bearer>`.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface TestMcpServer {
  url: string;
  /** Authorization headers the server received, in order. */
  authorizations: Array<string | undefined>;
  /** Resolves once `slow` has started (its first progress is sent). */
  slowStarted: Promise<void>;
  /** Resolves once `n` runs of `slow` saw their request cancelled. */
  slowCancelled(n: number): Promise<void>;
  /** Lets running `slow` calls finish. */
  releaseSlow(): void;
  /** Calls of each tool the server ran. */
  calls: Record<string, number>;
  close(): Promise<void>;
}

export async function startTestMcpServer(
  options: { bearer?: string } = {},
): Promise<TestMcpServer> {
  const calls: Record<string, number> = {};
  const authorizations: Array<string | undefined> = [];
  let markStarted!: () => void;
  let release!: () => void;
  let cancelled = 0;
  const cancelWaiters: Array<{ n: number; resolve: () => void }> = [];
  const markCancelled = () => {
    cancelled++;
    for (const w of cancelWaiters) if (cancelled >= w.n) w.resolve();
  };
  const slowStarted = new Promise<void>((r) => (markStarted = r));
  const released = new Promise<void>((r) => (release = r));
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };

  const build = () => {
    const server = new McpServer({ name: "test-docs", version: "1.0.0" });
    server.registerTool(
      "search",
      {
        description: "Search the company documentation",
        inputSchema: { query: z.string(), limit: z.number().int().min(1).max(5).optional() },
      },
      async ({ query, limit }) => {
        count("search");
        const hits = Array.from({ length: limit ?? 2 }, (_, i) => `${query} result ${i + 1}`);
        return { content: [{ type: "text", text: hits.join("\n") }] };
      },
    );
    server.registerTool(
      "lookup",
      {
        description: "Look up a document by id",
        inputSchema: { id: z.string() },
        outputSchema: { id: z.string(), title: z.string() },
      },
      async ({ id }) => {
        count("lookup");
        const doc = { id, title: `Document ${id}` };
        return { content: [{ type: "text", text: JSON.stringify(doc) }], structuredContent: doc };
      },
    );
    server.registerTool("explode", { description: "Always fails" }, async () => {
      count("explode");
      throw new Error("the index is corrupt");
    });
    server.registerTool(
      "slow",
      { description: "Takes its time and reports progress" },
      async (extra) => {
        count("slow");
        const token = extra._meta?.progressToken;
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: 1, total: 2, message: "warming up" },
          });
        }
        markStarted();
        await new Promise<void>((resolve) => {
          extra.signal.addEventListener("abort", () => {
            markCancelled();
            resolve();
          });
          void released.then(resolve);
        });
        return { content: [{ type: "text", text: "slow done" }] };
      },
    );
    return server;
  };

  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer(async (req, res) => {
    authorizations.push(req.headers.authorization);
    if (options.bearer !== undefined && req.headers.authorization !== `Bearer ${options.bearer}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const body = await readJson(req);
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
      });
      transport = created;
      await build().connect(transport);
    }
    if (!transport) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"no session"}');
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    slowStarted,
    slowCancelled: (n) =>
      new Promise<void>((resolve) => {
        if (cancelled >= n) resolve();
        else cancelWaiters.push({ n, resolve });
      }),
    releaseSlow: release,
    calls,
    async close() {
      release();
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}
