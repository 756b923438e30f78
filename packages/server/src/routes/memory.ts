// The owner's memory routes under the key's project (docs/api.md, "Memory"):
//   GET                /projects/:project/memory
//   GET                /projects/:project/memory/:resource/documents
//   GET|PUT|PATCH|DELETE /projects/:project/memory/:resource/documents/:doc
// Every route needs `?environment=development|production`. A project other than the key's
// answers 404 `project_not_found`, as an unknown one does. Writes are conditional: create with
// `If-None-Match: *`, everything else with `If-Match: "<revision>"` (the document's ETag).

import { MEMORY_LIMITS } from "@opencomputer/agent/internal";
import { MemoryError, type MemoryKey, type MemoryScopeRef } from "@opencomputer/runtime";
import { readJsonObject } from "../body.ts";
import type { RouteContext } from "../context.ts";
import { HttpError } from "../errors.ts";
import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import type { Params, Principal, Router } from "../router.ts";

const invalid = (path: string, message: string) =>
  new MemoryError("invalid_request", `${path}: ${message}`, { path });

function scopeOf(params: Params, url: URL, principal: Principal): MemoryScopeRef {
  if (params.project !== principal.projectId) {
    throw new HttpError("project_not_found", `No project ${JSON.stringify(params.project)}`, {
      path: "project",
    });
  }
  const environment = url.searchParams.get("environment");
  if (environment !== "development" && environment !== "production") {
    throw invalid("environment", "add ?environment=development or ?environment=production");
  }
  return { projectId: principal.projectId, environment };
}

const keyOf = (scope: MemoryScopeRef, params: Params): MemoryKey => ({
  ...scope,
  resource: params.resource!,
});

/** The revision in `If-Match: "<revision>"`, or 428 when the header is missing. */
function ifMatch(request: Request): string {
  const header = request.headers.get("if-match");
  if (header === null) {
    throw new MemoryError(
      "precondition_required",
      'If-Match: "<revision>" is required: send the ETag of the document you read',
      { path: "If-Match" },
    );
  }
  const match = /^"([^"]*)"$/.exec(header.trim());
  if (!match) throw invalid("If-Match", 'must be a quoted revision such as "3" (the ETag as read)');
  return match[1]!;
}

async function body(
  request: Request,
  allowed: readonly string[],
): Promise<Record<string, unknown>> {
  const value = await readJsonObject(request, MEMORY_LIMITS.bodyBytes);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw invalid(key, `is not a field of this request (allowed: ${allowed.join(", ")})`);
    }
  }
  return value;
}

const withEtag = (status: number, doc: { revision: string }) =>
  json(status, doc, { etag: `"${doc.revision}"` });

export function memoryRoutes(router: Router, ctx: RouteContext): void {
  const api = () => {
    if (!ctx.memory) throw new HttpError("not_found", "This server keeps no memory");
    return ctx.memory;
  };
  const base = "/projects/:project/memory";

  router.add("GET", base, async (_request, params, url, principal) => {
    checkQuery(url, ["environment"]);
    return json(200, { resources: await api().resources(scopeOf(params, url, principal)) });
  });

  router.add("GET", `${base}/:resource/documents`, async (_request, params, url, principal) => {
    checkQuery(url, ["environment", "cursor", "limit"]);
    const scope = scopeOf(params, url, principal);
    const cursor = url.searchParams.get("cursor");
    const limit = url.searchParams.get("limit");
    if (limit !== null && !/^[1-9][0-9]?$/.test(limit)) {
      throw invalid("limit", `must be an integer from 1 to ${MEMORY_LIMITS.listPage}`);
    }
    return json(
      200,
      await api().list(keyOf(scope, params), {
        ...(cursor ? { cursor } : {}),
        ...(limit ? { limit: Number(limit) } : {}),
      }),
    );
  });

  const doc = `${base}/:resource/documents/:doc`;
  router.add("GET", doc, async (_request, params, url, principal) => {
    checkQuery(url, ["environment"]);
    const scope = scopeOf(params, url, principal);
    return withEtag(200, await api().get(keyOf(scope, params), params.doc!));
  });

  router.add("PUT", doc, async (request, params, url, principal) => {
    checkQuery(url, ["environment"]);
    const key = keyOf(scopeOf(params, url, principal), params);
    if (request.headers.get("if-none-match") !== null) {
      if (request.headers.get("if-none-match")!.trim() !== "*") {
        throw invalid("If-None-Match", "only * (create when the id was never used) is supported");
      }
      const b = await body(request, ["title", "text", "summary", "agentWrites"]);
      const created = await api().create(key, { ...(b as { title: string }), id: params.doc! });
      return withEtag(201, created);
    }
    const revision = ifMatch(request);
    const b = await body(request, ["text", "summary"]);
    if (b.text === undefined) throw invalid("text", "is required (the document's whole text)");
    return withEtag(200, await api().replace(key, params.doc!, b as { text: string }, revision));
  });

  router.add("PATCH", doc, async (request, params, url, principal) => {
    checkQuery(url, ["environment"]);
    const key = keyOf(scopeOf(params, url, principal), params);
    const revision = ifMatch(request);
    const b = await body(request, ["title", "agentWrites"]);
    return withEtag(200, await api().patch(key, params.doc!, b, revision));
  });

  router.add("DELETE", doc, async (request, params, url, principal) => {
    checkQuery(url, ["environment"]);
    const key = keyOf(scopeOf(params, url, principal), params);
    await api().remove(key, params.doc!, ifMatch(request));
    return new Response(null, { status: 204 });
  });
}
