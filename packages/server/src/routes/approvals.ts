import { onlyFields, readJsonObject } from "../body.ts";
import type { RouteContext } from "../context.ts";
import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

/** Approvals: what waits for a person, their decision, and the honest outcomes after it. */
export function approvalRoutes(router: Router, ctx: RouteContext): void {
  router.add("GET", "/sessions/:id/approvals", async (_request, { id }, url) => {
    checkQuery(url, []);
    await ctx.sessions.get(id!); // 404 for an unknown session
    return json(200, { approvals: await ctx.approvals.list(id!) });
  });

  router.add("GET", "/approvals/:id", async (_request, { id }, url) => {
    checkQuery(url, []);
    return json(200, { approval: await ctx.approvals.get(id!) });
  });

  router.add("POST", "/approvals/:id/decision", async (request, { id }, url) => {
    checkQuery(url, []);
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, ["decision", "decidedBy"]);
    return json(200, {
      approval: await ctx.approvals.decide(id!, body as { decision: unknown; decidedBy?: unknown }),
    });
  });

  router.add("POST", "/approvals/:id/retry", async (_request, { id }, url) => {
    checkQuery(url, []);
    return json(200, { approval: await ctx.approvals.retry(id!) });
  });

  router.add("POST", "/approvals/:id/dismiss", async (_request, { id }, url) => {
    checkQuery(url, []);
    return json(200, { approval: await ctx.approvals.dismiss(id!) });
  });
}
