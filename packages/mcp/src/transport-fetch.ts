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

/**
 * What one client's requests share: a grant to fall back on for requests sent outside an
 * operation's context (the SDK sends a cancellation from the abort's listener), and the requests
 * in flight, so a cancelled call and `close` can let a cancellation reach the server first.
 */
export interface TransportState {
  fallback: Egress | undefined;
  pending: Set<Promise<unknown>>;
}

/** Waits (at most `limitMs`) for the requests in flight to be answered. */
export async function settlePending(state: TransportState, limitMs = 2000): Promise<void> {
  if (state.pending.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled([...state.pending]),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, limitMs);
    }),
  ]);
  clearTimeout(timer);
}

export function transportFetch(
  server: McpServerDeclaration,
  options: { allowLoopbackHttp: boolean },
  state: TransportState,
): FetchLike {
  const send = sender(server, options, state);
  return (input, init) => {
    const request = send(input, init);
    state.pending.add(request);
    void request.then(
      () => state.pending.delete(request),
      () => state.pending.delete(request),
    );
    return request;
  };
}

function sender(
  server: McpServerDeclaration,
  options: { allowLoopbackHttp: boolean },
  state: TransportState,
): FetchLike {
  const url = new URL(server.url);
  const loopbackHttp = url.protocol === "http:" && LOOPBACK.has(url.hostname);
  return async (input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET") return new Response(null, { status: 405 });
    const target = new URL(input instanceof URL ? input.href : String(input));
    if (server.connection !== undefined) {
      const egress = operationEgress.getStore() ?? state.fallback;
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
