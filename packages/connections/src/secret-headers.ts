// The headers of the request to the origin: agent code's own (never a credential header, never
// one that frames the request), then the connection's declared headers over them, secret
// references resolved for the token's environment and checked against their origin binding.

import { type ConnectionDeclaration, egressWire as wire } from "@opencomputer/agent/internal";
import { checkBinding } from "./origin-binding.ts";
import { EgressRefusal } from "./refusal.ts";
import type { SecretResolver } from "./secret-store.ts";

/** Hop-by-hop and framing headers are the gateway's business, not the agent's or the origin's. */
export const DROPPED_REQUEST_HEADERS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);

export interface UpstreamHeaders {
  headers: Headers;
  /** The secret values sent: what the response must not echo back to agent code. */
  values: string[];
}

export async function upstreamHeaders(
  encoded: string | undefined,
  connection: ConnectionDeclaration,
  environment: string,
  secrets: SecretResolver,
): Promise<UpstreamHeaders> {
  const pairs = wire.decodeHeaderPairs(encoded);
  if (!pairs) {
    throw new EgressRefusal(
      400,
      "egress_headers_invalid",
      "the request headers are malformed",
      "init.headers",
    );
  }
  const headers = new Headers();
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    if (wire.CREDENTIAL_HEADERS.includes(lower)) {
      throw new EgressRefusal(
        400,
        "egress_header_refused",
        `the "${lower}" header carries credentials, which come only from the connection's secret headers`,
        `init.headers.${lower}`,
      );
    }
    if (!DROPPED_REQUEST_HEADERS.has(lower)) headers.append(lower, value);
  }
  const values: string[] = [];
  // Declared headers override the agent's: the agent cannot replace a secret header.
  for (const [name, value] of Object.entries(connection.headers)) {
    if (typeof value === "string") {
      headers.set(name, value);
      continue;
    }
    const secret = await resolveSecret(secrets, environment, value.secret, name);
    checkBinding({ name: value.secret, origins: secret.origins }, connection, environment, name);
    values.push(secret.value);
    headers.set(name, `${value.prefix ?? ""}${secret.value}${value.suffix ?? ""}`);
  }
  return { headers, values };
}

async function resolveSecret(
  secrets: SecretResolver,
  environment: string,
  name: string,
  header: string,
): Promise<{ value: string; origins: readonly string[] }> {
  const resolved = await secrets.resolve(environment, name);
  if (resolved === undefined) {
    throw new EgressRefusal(
      424,
      "egress_secret_missing",
      `the secret ${name} is not set for the ${environment} environment; run \`opencomputer secrets set ${name} --environment ${environment}\`${environment === "development" ? " or add it to opencomputer/.env.local" : ""}`,
      `headers.${header}`,
    );
  }
  return typeof resolved === "string"
    ? { value: resolved, origins: [] }
    : { value: resolved.value, origins: resolved.origins ?? [] };
}
