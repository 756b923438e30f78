// The hosted platform's docs address the API under `/api/managed-agents/...`, and project
// resources under `/api/managed-agents/projects/<project-id>/...`. Serving those prefixes here,
// once, before routing, lets a command copied from those docs work against a self-hosted server
// by changing only the host, and gives every route (present and future) both forms for free.

import type { Match, Router } from "./router.ts";

/** The base path of the platform's management API. */
export const PLATFORM_PREFIX = "/api/managed-agents";

export interface RoutedPath {
  /** The path the router matches (`/sessions/ses_1`). */
  path: string;
  /** The project named by a `/projects/<id>/` prefix this candidate removed. */
  projectId?: string;
}

/**
 * The paths a request may mean, in the order to try them: without `/api/managed-agents`, as
 * written (so a route registered as `/projects/:projectId/...` keeps its own meaning); then,
 * for `/projects/<id>/<rest>`, `<rest>` scoped to that project. `null` when the project id
 * cannot be decoded (a 404, like any unknown route).
 */
export function routedPaths(pathname: string): RoutedPath[] | null {
  let path = pathname;
  if (pathname === PLATFORM_PREFIX || pathname.startsWith(`${PLATFORM_PREFIX}/`)) {
    path = pathname.slice(PLATFORM_PREFIX.length) || "/";
  }
  const candidates: RoutedPath[] = [{ path }];
  const scoped = /^\/projects\/([^/]+)(\/.+)$/.exec(path);
  if (scoped) {
    try {
      candidates.push({ path: scoped[2]!, projectId: decodeURIComponent(scoped[1]!) });
    } catch {
      return null;
    }
  }
  return candidates;
}

/**
 * Matches a request against the router under every path it may mean (routedPaths). A project in
 * the path that is not the key's answers 404, as an unknown route does, so the ids of other
 * projects cannot be probed. Returns the match with the path it matched, for the scope check.
 */
export function matchRoute(
  router: Router,
  method: string,
  pathname: string,
  projectId: string,
): { match: Match; path: string } {
  const notFound = { match: { kind: "not_found" } as Match, path: pathname };
  const candidates = routedPaths(pathname);
  if (!candidates) return notFound;
  for (const candidate of candidates) {
    const match = router.match(method, candidate.path);
    if (match.kind === "not_found") continue;
    if (candidate.projectId !== undefined && candidate.projectId !== projectId) return notFound;
    return { match, path: candidate.path };
  }
  return notFound;
}
