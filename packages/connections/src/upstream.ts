// The gateway's call to the origin. Redirects are followed here, not by fetch, so each hop is
// checked: only the connection's own origin and path prefix, at most a few hops, and the secret
// headers never travel to another host.

import { type ConnectionDeclaration, checkEgressPath } from "@opencomputer/agent/internal";
import { EgressRefusal } from "./refusal.ts";

export interface UpstreamRequest {
  connection: ConnectionDeclaration;
  method: string;
  /** Checked and normalised, with its query. */
  path: string;
  headers: Headers;
  body: Buffer | undefined;
  signal: AbortSignal;
  maxRedirects: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function callUpstream(request: UpstreamRequest): Promise<Response> {
  const { connection, signal } = request;
  let { method, path, body } = request;
  const headers = new Headers(request.headers);
  for (let hop = 0; ; hop++) {
    const url = new URL(path, connection.origin);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        ...(body ? { body } : {}),
        redirect: "manual",
        signal,
      });
    } catch (error) {
      if (signal.aborted) {
        // The reason says why (e.g. its call ended and the token was revoked), when it was us.
        throw signal.reason instanceof EgressRefusal
          ? signal.reason
          : new EgressRefusal(499, "egress_cancelled", "the request was cancelled");
      }
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const code = typeof cause?.code === "string" ? ` (${cause.code})` : "";
      throw new EgressRefusal(
        502,
        "egress_upstream_failed",
        `could not reach ${connection.origin}${code}`,
      );
    }
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) return response;
    await response.body?.cancel();
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new EgressRefusal(
        502,
        "egress_redirect_refused",
        `${connection.origin} redirected to an invalid location`,
      );
    }
    if (next.origin !== connection.origin) {
      throw new EgressRefusal(
        502,
        "egress_redirect_refused",
        `${connection.origin}${url.pathname} redirected to another origin (${next.origin}); a connection only follows redirects within its origin`,
      );
    }
    const checked = checkEgressPath(next.pathname + next.search, connection.pathPrefix);
    if (!checked.ok) {
      throw new EgressRefusal(
        502,
        "egress_redirect_refused",
        `the origin redirected to a path the connection does not allow: ${checked.message}`,
      );
    }
    if (hop + 1 > request.maxRedirects) {
      throw new EgressRefusal(
        502,
        "egress_redirect_loop",
        `more than ${request.maxRedirects} redirects`,
      );
    }
    // As browsers do: 303 always, and 301/302 after a POST, continue as GET without the body.
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === "POST")
    ) {
      if (method !== "HEAD") method = "GET";
      body = undefined;
      headers.delete("content-type");
    }
    path = checked.path;
  }
}
