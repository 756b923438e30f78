// `defineConnection` checks a declaration when its module loads, naming the field at fault, so
// a connection that could leak a credential (a literal Authorization header) or reach the wrong
// place (a plain-http origin, a path in the origin) never makes it into a deployment.

import { fetchThroughGateway } from "./connection-fetch.ts";
import { describeValue } from "./describe-value.ts";
import { suggestKey } from "./did-you-mean.ts";
import { CONNECTION_METHODS, type ConnectionMethod, CREDENTIAL_HEADERS } from "./egress-wire.ts";
import { OpenComputerError } from "./errors.ts";
import {
  isSecretHeader,
  isSecretRef,
  type SecretHeader,
  type SecretHeaderDeclaration,
  type SecretRef,
} from "./secrets.ts";

export const CONNECTION_ID_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const CONNECTION_BRAND = Symbol.for("opencomputer.connection");
const KEYS = ["id", "origin", "headers", "methods", "pathPrefix"] as const;

/** Hosts a connection may reach over plain http, for local development (the gateway allows
 * them only when the runtime runs in dev mode). */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export type HeaderValue = string | SecretRef | SecretHeader;

export interface ConnectionDefinition {
  id: string;
  /** `https://host[:port]`, no path. */
  origin: string;
  headers?: Record<string, HeaderValue>;
  /** Methods agent code may use (default: all of CONNECTION_METHODS). */
  methods?: readonly ConnectionMethod[];
  /** Paths agent code may reach, e.g. `/v1` (default `/`). */
  pathPrefix?: string;
}

/** A connection as a deployment manifest records it and the gateway enforces it. */
export interface ConnectionDeclaration {
  id: string;
  origin: string;
  headers: Record<string, string | SecretHeaderDeclaration>;
  methods: ConnectionMethod[];
  pathPrefix: string;
}

export interface Connection extends Readonly<ConnectionDeclaration> {
  /** Sends the request through the egress gateway, which adds the secret headers. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** A declaration refused; `details.path` names the field (e.g. `headers.authorization`). */
export class ConnectionDefinitionError extends OpenComputerError {}

export function defineConnection(definition: ConnectionDefinition): Connection {
  if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
    fail(
      undefined,
      "",
      `expected an object such as { id, origin }; got ${describeValue(definition)}`,
    );
  }
  const def = definition as unknown as Record<string, unknown>;
  const id = checkId(def.id);
  const unknown = Object.keys(def).filter((k) => !(KEYS as readonly string[]).includes(k));
  if (unknown[0] !== undefined) {
    const suggestion = suggestKey(unknown[0], KEYS);
    fail(
      id,
      unknown[0],
      `unknown key ${JSON.stringify(unknown[0])}${suggestion ? `; did you mean ${JSON.stringify(suggestion)}?` : ""} Allowed keys: ${KEYS.join(", ")}`,
    );
  }
  const declaration: ConnectionDeclaration = {
    id,
    origin: checkOrigin(id, def.origin),
    headers: checkHeaders(id, def.headers),
    methods: checkMethods(id, def.methods),
    pathPrefix: checkPathPrefix(id, def.pathPrefix),
  };
  const connection = {
    ...declaration,
    headers: Object.freeze(declaration.headers),
    methods: Object.freeze(declaration.methods),
    fetch: (path: string, init?: RequestInit) => fetchThroughGateway(declaration, path, init),
  };
  Object.defineProperty(connection, CONNECTION_BRAND, { value: true });
  return Object.freeze(connection) as unknown as Connection;
}

/** True for what `defineConnection` returned, from any copy of this package. */
export function isConnection(value: unknown): value is Connection {
  return typeof value === "object" && value !== null && Object.hasOwn(value, CONNECTION_BRAND);
}

/** The plain, JSON-compatible declaration of a connection (what the build records). */
export function connectionDeclaration(connection: Connection): ConnectionDeclaration {
  return {
    id: connection.id,
    origin: connection.origin,
    headers: JSON.parse(JSON.stringify(connection.headers)),
    methods: [...connection.methods],
    pathPrefix: connection.pathPrefix,
  };
}

function fail(id: string | undefined, path: string, message: string): never {
  const label = id === undefined ? "defineConnection" : `defineConnection(${JSON.stringify(id)})`;
  throw new ConnectionDefinitionError("connection_invalid", `${label}: ${message}`, {
    path,
    ...(id === undefined ? {} : { connection: id }),
  });
}

function checkId(value: unknown): string {
  if (typeof value !== "string" || !CONNECTION_ID_PATTERN.test(value)) {
    fail(
      undefined,
      "id",
      `"id" must be a letter followed by up to 63 letters, digits, "_" or "-"; got ${typeof value === "string" ? JSON.stringify(value) : describeValue(value)}`,
    );
  }
  return value;
}

function checkOrigin(id: string, value: unknown): string {
  if (typeof value !== "string")
    fail(
      id,
      "origin",
      `"origin" must be a string such as "https://api.example.com"; got ${describeValue(value)}`,
    );
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(id, "origin", `"origin" is not a URL: ${JSON.stringify(value)}`);
  }
  const loopback = url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== "https:" && !loopback) {
    fail(
      id,
      "origin",
      `"origin" must use https (plain http only to 127.0.0.1 or localhost, in dev mode); got ${JSON.stringify(value)}`,
    );
  }
  if (url.username || url.password) {
    fail(
      id,
      "origin",
      `"origin" must not carry credentials; store them as secrets and use "headers"`,
    );
  }
  if (url.pathname !== "/" || url.search || url.hash || /[?#]/.test(value.replace(/\/$/, ""))) {
    fail(
      id,
      "origin",
      `"origin" must be scheme, host and port only, without a path; put the path in "pathPrefix" or in fetch(); got ${JSON.stringify(value)}`,
    );
  }
  return url.origin;
}

function checkHeaders(
  id: string,
  value: unknown,
): Record<string, string | SecretHeaderDeclaration> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(
      id,
      "headers",
      `"headers" must be an object of header names to values; got ${describeValue(value)}`,
    );
  }
  const headers: Record<string, string | SecretHeaderDeclaration> = {};
  for (const [name, header] of Object.entries(value)) {
    const path = `headers.${name}`;
    const lower = name.toLowerCase();
    if (!HEADER_NAME_PATTERN.test(name))
      fail(id, path, `${JSON.stringify(name)} is not a valid header name`);
    if (lower in headers) fail(id, path, `the header ${JSON.stringify(lower)} is declared twice`);
    if (isSecretRef(header)) headers[lower] = { secret: header.name };
    else if (isSecretHeader(header)) {
      headers[lower] = {
        secret: header.secret,
        ...(header.prefix ? { prefix: header.prefix } : {}),
        ...(header.suffix ? { suffix: header.suffix } : {}),
      };
    } else if (typeof header === "string") {
      if (CREDENTIAL_HEADERS.includes(lower)) {
        fail(
          id,
          path,
          `a literal "${lower}" header would put a credential in source; store it with \`opencomputer secrets set NAME\` and use useSecret("NAME"), bearer(useSecret("NAME")) or secretHeader(...)`,
        );
      }
      if (/[\r\n\0]/.test(header)) fail(id, path, "header values must not contain line breaks");
      headers[lower] = header;
    } else {
      fail(
        id,
        path,
        `a header value must be a string, useSecret("NAME"), bearer(...) or secretHeader(...); got ${describeValue(header)}`,
      );
    }
  }
  return headers;
}

function checkMethods(id: string, value: unknown): ConnectionMethod[] {
  if (value === undefined) return [...CONNECTION_METHODS];
  if (!Array.isArray(value) || value.length === 0) {
    fail(
      id,
      "methods",
      `"methods" must be a non-empty array such as ["GET", "POST"]; got ${describeValue(value)}`,
    );
  }
  const methods: ConnectionMethod[] = [];
  value.forEach((method: unknown, i) => {
    if (typeof method !== "string" || !(CONNECTION_METHODS as readonly string[]).includes(method)) {
      fail(
        id,
        `methods[${i}]`,
        `${typeof method === "string" ? JSON.stringify(method) : describeValue(method)} is not one of ${CONNECTION_METHODS.join(", ")} (upper case)`,
      );
    }
    if (!methods.includes(method as ConnectionMethod)) methods.push(method as ConnectionMethod);
  });
  return methods;
}

function checkPathPrefix(id: string, value: unknown): string {
  if (value === undefined) return "/";
  if (
    typeof value !== "string" ||
    !value.startsWith("/") ||
    value.startsWith("//") ||
    /[?#\\\s]/.test(value) ||
    value.split("/").some((s) => s === "." || s === "..")
  ) {
    fail(
      id,
      "pathPrefix",
      `"pathPrefix" must be a path starting with "/", without ".", "..", "?", "#" or spaces; got ${typeof value === "string" ? JSON.stringify(value) : describeValue(value)}`,
    );
  }
  return value;
}
