// `defineMcpServer` declares a remote MCP server an agent may attach with `useMcpServer`. The
// runtime, not agent code, holds the MCP client: a declaration is only data (id, URL, the id of
// the connection that authorizes it), checked when its module loads so a bad URL or a
// credential in source never reaches a deployment. The build collects every declaration made
// while the agent's modules load (the collector below) and records them in the manifest; the
// runtime connects only to what the manifest lists.

import { type ConnectionRef, isConnectionRef } from "./connection-ref.ts";
import {
  CONNECTION_ID_PATTERN,
  type Connection,
  type ConnectionDeclaration,
  connectionDeclaration,
  isConnection,
} from "./define-connection.ts";
import { describeValue } from "./describe-value.ts";
import { suggestKey } from "./did-you-mean.ts";
import { OpenComputerError } from "./errors.ts";

/**
 * A letter, then letters, digits and hyphens, at most 32 characters. No underscores: the model
 * sees a server's tools as `mcp__<id>__<tool>`, and the id must end at the first `__`.
 */
export const MCP_SERVER_ID_PATTERN = /^[a-zA-Z][a-zA-Z0-9-]{0,31}$/;

const KEYS = ["id", "url", "connection"] as const;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
const MCP_BRAND = Symbol.for("opencomputer.mcpServer");
const COLLECTOR_SLOT = Symbol.for("opencomputer.agent.mcpCollector");

export interface McpServerDefinition {
  /** Stable id of the server in the deployment. */
  id: string;
  /** The server's Streamable HTTP endpoint: https (plain http only to loopback, in dev mode). */
  url: string;
  /** The connection whose secret headers authorize requests to the server, a reference, or its id. */
  connection?: Connection | ConnectionRef | string;
}

/** A server as the deployment records it and the runtime connects to it. */
export interface McpServerDeclaration {
  id: string;
  url: string;
  /** The id of the connection whose headers the egress gateway adds. */
  connection?: string;
}

/** What `defineMcpServer` returns: the declaration, frozen and branded. */
export type McpServer = Readonly<McpServerDeclaration>;

/** A declaration refused; `details.path` names the field. */
export class McpServerDefinitionError extends OpenComputerError {}

/** What the build's collector receives for each definition made while a module loads. */
export interface CollectedMcpServer {
  declaration: McpServerDeclaration;
  /** The connection object given inline (recorded beside the agent's other connections). */
  connection?: ConnectionDeclaration;
  /** Where the definition was made (the stack at the call), for errors with a file and line. */
  stack: string;
}

export function defineMcpServer(definition: McpServerDefinition): McpServer {
  if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
    fail(undefined, "", `expected an object such as { id, url }; got ${describeValue(definition)}`);
  }
  const def = definition as unknown as Record<string, unknown>;
  const id = checkId(def.id);
  const unknown = Object.keys(def).find((k) => !(KEYS as readonly string[]).includes(k));
  if (unknown !== undefined) {
    const suggestion = suggestKey(unknown, KEYS);
    fail(
      id,
      unknown,
      `unknown key ${JSON.stringify(unknown)}${suggestion ? `; did you mean ${JSON.stringify(suggestion)}?` : ""} Allowed keys: ${KEYS.join(", ")}`,
    );
  }
  const url = checkUrl(id, def.url);
  const { connectionId, inline } = checkConnection(id, def.connection);
  const server: McpServerDeclaration = {
    id,
    url,
    ...(connectionId === undefined ? {} : { connection: connectionId }),
  };
  Object.defineProperty(server, MCP_BRAND, { value: true });
  collect(server, inline);
  return Object.freeze(server);
}

/** True for what `defineMcpServer` returned, from any copy of this package. */
export function isMcpServer(value: unknown): value is McpServer {
  return typeof value === "object" && value !== null && Object.hasOwn(value, MCP_BRAND);
}

/** The plain declaration of a server (what the build records and a render reports). */
export function mcpServerDeclaration(server: McpServer): McpServerDeclaration {
  return {
    id: server.id,
    url: server.url,
    ...(server.connection === undefined ? {} : { connection: server.connection }),
  };
}

/**
 * Build-internal: records every definition made until `stop` is called; `take` hands over (and
 * forgets) those made so far. The build's loader installs it while it imports an agent's
 * modules; without it nothing is kept.
 */
export function collectMcpServers(): { take(): CollectedMcpServer[]; stop(): void } {
  const holder = globalThis as { [COLLECTOR_SLOT]?: CollectedMcpServer[] };
  const collected: CollectedMcpServer[] = [];
  holder[COLLECTOR_SLOT] = collected;
  return {
    take: () => collected.splice(0),
    stop: () => {
      if (holder[COLLECTOR_SLOT] === collected) holder[COLLECTOR_SLOT] = undefined;
    },
  };
}

function collect(server: McpServerDeclaration, inline: ConnectionDeclaration | undefined): void {
  const collected = (globalThis as { [COLLECTOR_SLOT]?: CollectedMcpServer[] })[COLLECTOR_SLOT];
  if (!collected) return;
  collected.push({
    declaration: mcpServerDeclaration(server),
    ...(inline ? { connection: inline } : {}),
    stack: new Error().stack ?? "",
  });
}

function fail(id: string | undefined, path: string, message: string): never {
  const label = id === undefined ? "defineMcpServer" : `defineMcpServer(${JSON.stringify(id)})`;
  throw new McpServerDefinitionError("mcp_server_invalid", `${label}: ${message}`, {
    path,
    ...(id === undefined ? {} : { server: id }),
  });
}

function checkId(value: unknown): string {
  if (typeof value !== "string" || !MCP_SERVER_ID_PATTERN.test(value)) {
    fail(
      undefined,
      "id",
      `"id" must be a letter followed by up to 31 letters, digits or "-" (no "_": tools appear to the model as mcp__<id>__<tool>); got ${typeof value === "string" ? JSON.stringify(value) : describeValue(value)}`,
    );
  }
  return value;
}

function checkUrl(id: string, value: unknown): string {
  if (typeof value !== "string") {
    fail(
      id,
      "url",
      `"url" must be a string such as "https://mcp.example.com/mcp"; got ${describeValue(value)}`,
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(id, "url", `"url" is not a URL: ${JSON.stringify(value)}`);
  }
  const loopback = url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== "https:" && !loopback) {
    fail(
      id,
      "url",
      `"url" must use https (plain http only to 127.0.0.1 or localhost, in dev mode); got ${JSON.stringify(value)}`,
    );
  }
  if (url.username || url.password) {
    fail(id, "url", `"url" must not carry credentials; declare a connection with a secret header`);
  }
  if (url.search || url.hash || /[?#]/.test(value)) {
    fail(
      id,
      "url",
      `"url" must not have a query or fragment (a query could hold a credential); use a connection's secret headers for authorization`,
    );
  }
  return url.href;
}

function checkConnection(
  id: string,
  value: unknown,
): { connectionId?: string; inline?: ConnectionDeclaration } {
  if (value === undefined) return {};
  if (typeof value === "string") {
    if (!CONNECTION_ID_PATTERN.test(value)) {
      fail(id, "connection", `"connection" ${JSON.stringify(value)} is not a connection id`);
    }
    return { connectionId: value };
  }
  if (isConnection(value)) {
    return { connectionId: value.id, inline: connectionDeclaration(value) };
  }
  // connection("id"): the id only; the build finds the declaration in connections/.
  if (isConnectionRef(value)) return { connectionId: value.id };
  return fail(
    id,
    "connection",
    `"connection" must be a connection returned by defineConnection() or connection(id), or its id; got ${describeValue(value)}`,
  );
}
