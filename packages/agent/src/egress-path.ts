// One path check for both sides: connection.fetch refuses early with the same rule the gateway
// enforces (the gateway never trusts the client's check). Dot segments are resolved the way an
// origin server would, including percent-encoded ones, and the result must stay under the
// connection's pathPrefix, so `/v1/../admin` cannot reach `/admin` through a `/v1` connection.
// Servlet containers (Tomcat, Jetty) drop a `;` path parameter before resolving, so `..;` and
// `.;` (also encoded, `%2e%2e;`, `..%3b`) are dot segments too.

export type PathCheck =
  | { ok: true; path: string }
  | { ok: false; code: "egress_path_invalid" | "egress_path_outside_prefix"; message: string };

export function checkEgressPath(path: unknown, pathPrefix: string): PathCheck {
  const invalid = (why: string): PathCheck => ({
    ok: false,
    code: "egress_path_invalid",
    message: `path ${typeof path === "string" ? JSON.stringify(path.slice(0, 200)) : String(path)} ${why}`,
  });
  if (typeof path !== "string") return invalid("must be a string");
  if (!path.startsWith("/"))
    return invalid('must start with "/" (the origin is part of the connection)');
  if (path.startsWith("//")) return invalid('must not start with "//"');
  if (path.length > 8192) return invalid("is longer than 8192 characters");
  // Characters an origin could read as another separator, or that do not belong in a URL path.
  if (/[\\#\s]/.test(path) || hasControlCharacter(path)) {
    return invalid("must not contain backslashes, '#', spaces or control characters");
  }
  if (/%(2f|5c|00)/i.test(path)) return invalid("must not contain encoded '/', '\\' or NUL");
  const queryAt = path.indexOf("?");
  const pathname = queryAt === -1 ? path : path.slice(0, queryAt);
  const query = queryAt === -1 ? "" : path.slice(queryAt);
  const segments = pathname.slice(1).split("/");
  const kept: string[] = [];
  for (const raw of segments) {
    const segment = dotForm(raw);
    if (segment === ".") continue;
    if (segment === "..") {
      if (kept.length === 0) return invalid("climbs above the origin's root with '..'");
      kept.pop();
      continue;
    }
    kept.push(raw);
  }
  const last = dotForm(segments[segments.length - 1] ?? "");
  const trailing = last === "" || last === "." || last === "..";
  let normalized = `/${kept.join("/")}`;
  if (trailing && !normalized.endsWith("/")) normalized += "/";
  if (!withinPrefix(normalized, pathPrefix)) {
    return {
      ok: false,
      code: "egress_path_outside_prefix",
      message: `path ${JSON.stringify(normalized)} is outside the connection's pathPrefix ${JSON.stringify(pathPrefix)}`,
    };
  }
  return { ok: true, path: normalized + query };
}

/** A segment as an origin resolves it: `%2e` decoded, any `;` parameter (also `%3b`) dropped. */
function dotForm(segment: string): string {
  const decoded = segment.replace(/%2e/gi, ".").replace(/%3b/gi, ";");
  const parameterAt = decoded.indexOf(";");
  const name = parameterAt === -1 ? decoded : decoded.slice(0, parameterAt);
  return name === "." || name === ".." ? name : decoded;
}

function withinPrefix(path: string, prefix: string): boolean {
  if (prefix === "/" || prefix === "") return true;
  const base = prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
  return path === base || path.startsWith(`${base}/`);
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
