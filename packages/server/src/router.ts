import { HttpError } from "./errors.ts";

export type Params = Record<string, string>;
/** Who is calling: the project their API key belongs to. */
export interface Principal {
  projectId: string;
}

export type RouteHandler = (
  request: Request,
  params: Params,
  url: URL,
  principal: Principal,
) => Promise<Response>;

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

export type Match =
  | { kind: "found"; handler: RouteHandler; params: Params }
  | { kind: "not_found" }
  | { kind: "method_not_allowed"; allow: string[] };

/** Splits a path into decoded segments; `null` when it cannot be decoded (a 404, not a 500). */
function split(path: string): string[] | null {
  try {
    return path.split("/").slice(1).map(decodeURIComponent);
  } catch {
    return null;
  }
}

/**
 * Method + pattern (`/sessions/:id/results`) → handler. Kept this small on purpose: the API has a
 * dozen fixed routes, and a dependency-free router mounts in any host (Next.js, Hono, Express).
 */
export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: RouteHandler): this {
    this.routes.push({ method, segments: pattern.split("/").slice(1), handler });
    return this;
  }

  match(method: string, path: string): Match {
    const segments = split(path);
    if (!segments) return { kind: "not_found" };
    const allow: string[] = [];
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      if (route.method === method) return { kind: "found", handler: route.handler, params };
      allow.push(route.method);
    }
    return allow.length ? { kind: "method_not_allowed", allow } : { kind: "not_found" };
  }
}

function matchSegments(pattern: string[], segments: string[]): Params | null {
  if (pattern.length !== segments.length) return null;
  const params: Params = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segments[i]!;
    if (p.startsWith(":")) {
      if (s === "") return null;
      params[p.slice(1)] = s;
    } else if (p !== s) return null;
  }
  return params;
}

export const notFound = (path: string): HttpError =>
  new HttpError("not_found", `No route for ${path.slice(0, 200)}`);
