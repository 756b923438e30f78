// What agent code and the egress gateway agree on. Both sides import these names, so the
// gateway (in the control plane) and connection.fetch (in agent code) cannot drift apart.
//
// A request goes to the gateway as `POST <gatewayUrl>` with the target in headers and the
// agent's own headers as one encoded header, so nothing the HTTP client adds on its own
// (user-agent, accept-encoding, …) is mistaken for the agent's; the body is the request body.
// The gateway answers 200 with the origin's status and headers encoded the same way and the
// origin's body as the body; a refusal is a non-200 with EGRESS_ERROR_HEADER and a JSON
// `{ error: { code, message, path? } }`.

export const EGRESS_TOKEN_HEADER = "x-opencomputer-egress-token";
export const EGRESS_CONNECTION_HEADER = "x-opencomputer-egress-connection";
export const EGRESS_METHOD_HEADER = "x-opencomputer-egress-method";
/** `encodeURIComponent` of the path (with its query), so any path fits in a header. */
export const EGRESS_PATH_HEADER = "x-opencomputer-egress-path";
/** base64url of the JSON array of `[name, value]` pairs. */
export const EGRESS_HEADERS_HEADER = "x-opencomputer-egress-headers";
export const EGRESS_STATUS_HEADER = "x-opencomputer-egress-status";
export const EGRESS_STATUS_TEXT_HEADER = "x-opencomputer-egress-status-text";
export const EGRESS_ERROR_HEADER = "x-opencomputer-egress-error";

/** The largest request body a connection sends (PLATFORM.md: 5 MiB). */
export const MAX_EGRESS_BODY_BYTES = 5 * 1024 * 1024;

/** Header names whose literal values would be credentials: they may only come from secrets. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  "authorization",
  "cookie",
  "x-api-key",
  "api-key",
  "proxy-authorization",
];

/** Methods a connection may declare; `methods` defaults to all of them. */
export const CONNECTION_METHODS = [
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
] as const;

export type ConnectionMethod = (typeof CONNECTION_METHODS)[number];

export function encodeHeaderPairs(pairs: ReadonlyArray<readonly [string, string]>): string {
  return Buffer.from(JSON.stringify(pairs), "utf8").toString("base64url");
}

/** The pairs, or undefined when the value is not what encodeHeaderPairs makes. */
export function decodeHeaderPairs(
  value: string | null | undefined,
): [string, string][] | undefined {
  if (!value) return [];
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
    if (!Array.isArray(parsed)) return undefined;
    for (const pair of parsed) {
      if (
        !Array.isArray(pair) ||
        pair.length !== 2 ||
        typeof pair[0] !== "string" ||
        typeof pair[1] !== "string"
      )
        return undefined;
    }
    return parsed as [string, string][];
  } catch {
    return undefined;
  }
}
