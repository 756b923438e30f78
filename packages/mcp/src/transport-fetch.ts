// The fetch the MCP client's transport uses. A server that names a connection is reached only
// through the egress gateway, with the token of the operation in progress: the gateway sends
// the request to the connection's origin (never to an origin the URL could name), adds the
// connection's secret headers and records egress events in the session's log. A server without
// a connection is reached directly, over https (plain http to loopback only when allowed).
//
// The standalone GET stream (server-initiated messages outside a request) is answered 405 here,
// which the SDK takes as "not offered": a turn's client only needs the answers to its own
// requests, and a stream left open would outlive the token of the operation that opened it.

import { AsyncLocalStorage } from "node:async_hooks";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { fetchThroughGateway, runWithEgress } from "@opencomputer/agent/internal";
import { type Egress, McpError, type McpServerDeclaration } from "@opencomputer/runtime";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The egress grant of the operation a request belongs to (set around each client call). */
export const operationEgress = new AsyncLocalStorage<Egress | undefined>();

export function transportFetch(
  server: McpServerDeclaration,
  options: { allowLoopbackHttp: boolean },
): FetchLike {
  const url = new URL(server.url);
  const loopbackHttp = url.protocol === "http:" && LOOPBACK.has(url.hostname);
  return async (input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET") return new Response(null, { status: 405 });
    const target = new URL(input instanceof URL ? input.href : String(input));
    if (server.connection !== undefined) {
      const egress = operationEgress.getStore();
      if (!egress) {
        throw new McpError(
          "mcp_egress_unavailable",
          `MCP server "${server.id}": no egress grant for this request`,
          { server: server.id },
        );
      }
      const connection = { id: server.connection, methods: [method], pathPrefix: "/" };
      return runWithEgress({ ...egress, ...(init?.signal ? { signal: init.signal } : {}) }, () =>
        fetchThroughGateway(connection, target.pathname + target.search, init ?? {}),
      );
    }
    if (loopbackHttp && !options.allowLoopbackHttp) {
      throw new McpError(
        "mcp_server_unavailable",
        `MCP server "${server.id}" is plain http (${url.origin}), which only dev mode allows`,
        { server: server.id },
      );
    }
    return fetch(target, { ...init, redirect: "error" });
  };
}
