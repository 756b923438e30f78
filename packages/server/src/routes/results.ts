import type { RouteContext } from "../context.ts";
import { HttpError } from "../errors.ts";
import { checkQuery, intParam } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

export function resultRoutes(router: Router, ctx: RouteContext): void {
  const list = async (sessionId: string, url: URL, turnId?: string) => {
    checkQuery(url, ["limit", "cursor"]);
    const cursor = url.searchParams.get("cursor");
    const page = await ctx.sessions.results(sessionId, {
      limit: intParam(url, "limit", 1, 200, 50),
      ...(cursor ? { cursor } : {}),
      ...(turnId ? { turnId } : {}),
    });
    return json(200, page);
  };

  router.add("GET", "/sessions/:id/results", (_request, { id }, url) => list(id!, url));

  router.add("GET", "/sessions/:id/turns/:turnId/results", async (_request, params, url) => {
    // An unknown turn is a 404, not an empty list: the caller most likely has a wrong id.
    const session = await ctx.sessions.get(params.id!);
    if (!session.turns.some((t) => t.id === params.turnId))
      throw new HttpError("not_found", `No turn ${params.turnId} in session ${params.id}`, {
        path: "turn",
      });
    return list(params.id!, url, params.turnId);
  });

  router.add("GET", "/sessions/:id/results/:resultId", async (_request, params, url) => {
    checkQuery(url, []);
    await ctx.sessions.get(params.id!);
    return json(200, await ctx.sessions.result(params.id!, params.resultId!));
  });
}
