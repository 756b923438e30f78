// A secret bound to origins is sent only to those origins. Connections are declared by agent
// code, so without a binding any agent of the project could declare a connection to a host of
// its choosing with `useSecret("ANY")` and receive the value there; the binding is the operator's
// word on where a credential may go (`opencomputer secrets set NAME --origin https://…`), kept
// with the secret and checked by the gateway on every request.

import type { ConnectionDeclaration } from "@opencomputer/agent/internal";
import { EgressRefusal } from "./refusal.ts";
import { SecretError } from "./secret-error.ts";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** `https://host[:port]` (plain http only to loopback) as the URL standard spells its origin. */
export function normalizeOrigin(value: string, path: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const plainLoopback = url?.protocol === "http:" && LOOPBACK.has(url.hostname);
  if (!url || (url.protocol !== "https:" && !plainLoopback)) {
    throw new SecretError(
      "secret_origin_invalid",
      `--origin must be an https origin such as https://api.example.com (plain http only to 127.0.0.1 or localhost); got ${JSON.stringify(value)}`,
      { path },
    );
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== "/") {
    throw new SecretError(
      "secret_origin_invalid",
      `--origin must be scheme, host and port only, without a path, query or user; got ${JSON.stringify(value)}`,
      { path },
    );
  }
  return url.origin;
}

/** The operator's origins, checked, normalised, without repeats, sorted (a stable binding). */
export function normalizeOrigins(values: readonly string[]): string[] {
  const origins = values.map((value, i) => normalizeOrigin(value, `origins[${i}]`));
  return [...new Set(origins)].sort();
}

/** Refuses to send `secret` on `connection` when the secret is bound to other origins. */
export function checkBinding(
  secret: { name: string; origins: readonly string[] },
  connection: ConnectionDeclaration,
  environment: string,
  header: string,
): void {
  if (secret.origins.length === 0) return;
  const origin = new URL(connection.origin).origin;
  if (secret.origins.includes(origin)) return;
  throw new EgressRefusal(
    403,
    "egress_secret_origin_refused",
    `the secret ${secret.name} (${environment}) is bound to other origins than ${origin}, the origin of the connection "${connection.id}"; if it may go there, an operator adds it with \`opencomputer secrets set ${secret.name} --environment ${environment} --origin ${origin}\` (one --origin per allowed origin)`,
    `headers.${header}`,
  );
}
