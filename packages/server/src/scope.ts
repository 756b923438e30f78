import { NotFoundError } from "@opencomputer/runtime";
import type { RouteContext } from "./context.ts";
import type { Params } from "./router.ts";

/**
 * Keeps a key inside its project: a session (or an approval of a session) of another project
 * answers exactly as an unknown one does, 404 `not_found`, so ids of other projects cannot even
 * be probed. Checked once here for every `/sessions/:id…` and `/approvals/:id…` route rather
 * than in each route, so a new route cannot forget it.
 */
export async function checkScope(
  ctx: RouteContext,
  pathname: string,
  params: Params,
  projectId: string,
): Promise<void> {
  const id = params.id;
  if (id === undefined) return;
  if (pathname.startsWith("/sessions/")) {
    if ((await ctx.sessions.projectOf(id)) !== projectId) throw new NotFoundError("session", id);
  } else if (pathname.startsWith("/approvals/")) {
    const approval = await ctx.approvals.get(id);
    if ((await ctx.sessions.projectOf(approval.sessionId)) !== projectId)
      throw new NotFoundError("approval", id);
  }
}
