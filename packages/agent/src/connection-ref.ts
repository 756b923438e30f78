// `connection(id)` and `useConnection(conn)`. On the hosted platform `connection("github")`
// names a service each user authorizes with their own account. A self-hosted runtime has no
// per-user accounts: a connection is what the project declares with `defineConnection` (an
// origin, its secret headers, methods and paths) in `connections/*.ts`, and `connection(id)` is a
// reference to that declaration by id. Its `fetch` goes through the egress gateway, which
// applies the deployment's declaration of that id; the build refuses an id the agent's
// connections do not declare.

import { fetchThroughGateway } from "./connection-fetch.ts";
import {
  CONNECTION_ID_PATTERN,
  type Connection,
  ConnectionDefinitionError,
  isConnection,
} from "./define-connection.ts";
import { describeValue } from "./describe-value.ts";
import { CONNECTION_METHODS } from "./egress-wire.ts";
import { RenderError } from "./errors.ts";
import { currentRender } from "./render-context.ts";

const REF_BRAND = Symbol.for("opencomputer.connectionRef");

/** A connection named by id; the project declares it with `defineConnection({ id, ... })`. */
export interface ConnectionRef {
  readonly id: string;
  /**
   * Sends a request through the egress gateway, which checks it against the declaration of
   * `id` (origin, methods, path prefix) and adds its secret headers. Only inside a tool's `run`,
   * `preview` or `apply`.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** A reference to the connection the project declares under `id`. Safe to commit: no secret. */
export function connection(id: string): ConnectionRef {
  if (typeof id !== "string" || !CONNECTION_ID_PATTERN.test(id)) {
    throw new ConnectionDefinitionError(
      "connection_invalid",
      `connection(${typeof id === "string" ? JSON.stringify(id) : describeValue(id)}): a connection id is a letter, then up to 63 letters, digits, "_" or "-"`,
      { path: "id" },
    );
  }
  // The declaration decides what is allowed; the gateway enforces it. Here only the checks that
  // hold for every connection run (a well-formed path, no credential headers).
  const target = { id, methods: CONNECTION_METHODS, pathPrefix: "/" };
  const ref = {
    id,
    fetch: (path: string, init?: RequestInit) => fetchThroughGateway(target, path, init),
  };
  Object.defineProperty(ref, REF_BRAND, { value: true });
  return Object.freeze(ref);
}

/** True for what `connection(id)` returned, from any copy of this package. */
export function isConnectionRef(value: unknown): value is ConnectionRef {
  return typeof value === "object" && value !== null && Object.hasOwn(value, REF_BRAND);
}

/**
 * Says this render needs a connection: one from `connection(id)` or `defineConnection`. The
 * render records it (`agent.rendered` → `requiredConnections`); requests are allowed by the
 * deployment's declarations either way.
 */
export function useConnection(conn: ConnectionRef | Connection): void {
  const state = currentRender();
  if (!isConnectionRef(conn) && !isConnection(conn)) {
    throw new RenderError(
      "connection_invalid",
      `useConnection expects a value from connection(id) or defineConnection(); got ${describeValue(conn)}`,
    );
  }
  state.connections ??= [];
  if (!state.connections.includes(conn.id)) state.connections.push(conn.id);
}
