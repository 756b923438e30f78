import { canonicalJson, InputError, parseAgentRef, type SessionView } from "@opencomputer/runtime";
import { onlyFields, readJsonObject } from "../body.ts";
import type { RouteContext } from "../context.ts";
import { HttpError, invalidInput, invalidQuery } from "../errors.ts";
import { checkQuery, intParam } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

const LABEL_KEY = /^[a-z][a-z0-9_.-]{0,63}$/;
const CREATE_FIELDS = [
  "agentId",
  "source",
  "labels",
  "executionMode",
  "environment",
  "memory",
  "data",
  "budget",
] as const;

/** The compact form `POST /sessions` returns. */
const created = (s: SessionView) => ({
  session: { id: s.id, executionMode: s.executionMode, status: s.status, createdAt: s.createdAt },
  deployment: { id: s.deploymentId },
});

/**
 * A replay must ask for the same session. Nothing about the first body is stored beyond the
 * session itself, so the replayed session's own fields (with the create defaults applied to the
 * new body) are the durable record of what was asked.
 */
function sameRequest(s: SessionView, body: Record<string, unknown>): boolean {
  return (
    s.agentId === parseAgentRef(String(body.agentId)).agentId &&
    s.source === (body.source ?? "api") &&
    s.executionMode === (body.executionMode ?? "default") &&
    s.environment === (body.environment ?? "development") &&
    canonicalJson(s.labels) === canonicalJson(body.labels ?? {}) &&
    sameMemory(s, body.memory) &&
    canonicalJson(s.data) === canonicalJson(body.data ?? {}) &&
    canonicalJson(s.budget ?? null) === canonicalJson(body.budget ?? null)
  );
}

/** The replayed session's bindings are the ones this body asks for (access defaults to read). */
function sameMemory(s: SessionView, memory: unknown): boolean {
  const asked =
    typeof memory === "object" && memory !== null
      ? Object.entries(memory as Record<string, Record<string, unknown>>).map(([resource, b]) => [
          resource,
          b?.scope,
          b?.id ?? null,
          b?.access ?? "read",
        ])
      : [];
  const bound = s.memory.map((b) => [b.resource, b.scope, b.id ?? null, b.access]);
  return canonicalJson(asked) === canonicalJson(bound);
}

export function sessionRoutes(router: Router, ctx: RouteContext): void {
  router.add("POST", "/sessions", async (request, _params, _url, principal) => {
    const key = request.headers.get("idempotency-key");
    if (key !== null && (key.length === 0 || key.length > 256))
      throw invalidInput("Idempotency-Key", "must be 1 to 256 characters");
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, CREATE_FIELDS);
    const result = await ctx.sessions.create({
      ...(body as { agentId: string }),
      projectId: principal.projectId,
      ...(key !== null ? { idempotencyKey: key } : {}),
    });
    if (result.created) return json(201, created(result.session));
    if (!sameRequest(result.session, body)) {
      throw new HttpError(
        "idempotency_conflict",
        "Idempotency-Key was already used with a different request body",
        { path: "Idempotency-Key" },
      );
    }
    return json(200, created(result.session));
  });

  router.add("GET", "/sessions", async (_request, _params, url, principal) => {
    checkQuery(url, ["agent", "status", "limit", "cursor", "waiting"], ["label."]);
    const labels: Record<string, string> = {};
    for (const [name, value] of url.searchParams) {
      if (!name.startsWith("label.")) continue;
      const key = name.slice("label.".length);
      // The same rule as label keys on sessions: a filter on any other key cannot match.
      if (!LABEL_KEY.test(key)) throw invalidQuery(name, `label key must match ${LABEL_KEY}`);
      labels[key] = value;
    }
    const agent = url.searchParams.get("agent");
    const status = url.searchParams.get("status");
    const cursor = url.searchParams.get("cursor");
    const waiting = url.searchParams.get("waiting");
    if (waiting !== null && waiting !== "true" && waiting !== "false")
      throw invalidQuery("waiting", "must be true or false");
    try {
      const page = await ctx.sessions.list({
        projectId: principal.projectId,
        limit: intParam(url, "limit", 1, 100, 50),
        ...(agent ? { agentId: agent } : {}),
        ...(status ? { status: status as never } : {}),
        ...(cursor ? { cursor } : {}),
        ...(Object.keys(labels).length ? { labels } : {}),
        ...(waiting === "true" ? { waiting: true } : {}),
      });
      return json(200, page);
    } catch (error) {
      // The runtime checks status and cursor; here they came from the query string.
      if (error instanceof InputError)
        throw invalidQuery(error.details.path ?? "query", error.message);
      throw error;
    }
  });

  router.add("GET", "/sessions/:id", async (_request, { id }, url) => {
    checkQuery(url, []);
    return json(200, await ctx.sessions.get(id!));
  });

  router.add("PATCH", "/sessions/:id/labels", async (request, { id }, url) => {
    checkQuery(url, []);
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, ["set", "unset"]);
    return json(200, {
      session: await ctx.sessions.updateLabels(
        id!,
        body as { set?: Record<string, string>; unset?: string[] },
      ),
    });
  });

  router.add("POST", "/sessions/:id/end", async (_request, { id }, url) => {
    checkQuery(url, []);
    await ctx.sessions.end(id!);
    return json(200, { session: await ctx.sessions.get(id!) });
  });

  router.add("POST", "/sessions/:id/interrupt", async (_request, { id }, url) => {
    checkQuery(url, []);
    return json(200, await ctx.sessions.interrupt(id!));
  });
}
