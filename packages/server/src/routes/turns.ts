import { onlyFields, readJsonObject } from "../body.ts";
import type { RouteContext } from "../context.ts";
import { invalidInput } from "../errors.ts";
import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

export function turnRoutes(router: Router, ctx: RouteContext): void {
  router.add("POST", "/sessions/:id/turns", async (request, { id }, url) => {
    checkQuery(url, []);
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, ["input", "idempotencyKey", "mode"]);
    if (body.input === undefined) throw invalidInput("input", "is required");
    const result = await ctx.sessions.sendTurn(id!, body.input, {
      ...(body.idempotencyKey !== undefined
        ? { idempotencyKey: body.idempotencyKey as string }
        : {}),
      ...(body.mode !== undefined ? { mode: body.mode as never } : {}),
    });
    return json(result.duplicate ? 200 : 202, result);
  });
}
