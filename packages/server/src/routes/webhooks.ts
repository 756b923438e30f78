// Webhooks: management under the API key, and the ingress a sender posts to, which carries its
// own credential (the token in the URL or as a Bearer token) and so is served before the key
// check (see handler.ts).

import { NotFoundError } from "@opencomputer/runtime";
import type { Webhooks } from "@opencomputer/webhooks";
import { MAX_WEBHOOK_BODY_BYTES } from "@opencomputer/webhooks";
import { onlyFields, readJsonObject, readLimited } from "../body.ts";
import type { RouteContext } from "../context.ts";
import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import { Router } from "../router.ts";

export const WEBHOOK_INGRESS_PREFIX = "/agent-webhooks/";

export function webhookRoutes(router: Router, ctx: RouteContext, webhooks: Webhooks): void {
  router.add("POST", "/webhooks", async (request, _params, url, principal) => {
    checkQuery(url, []);
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, ["agentId", "environment", "name"]);
    return json(201, await webhooks.create({ ...body, projectId: principal.projectId } as never));
  });

  router.add("GET", "/webhooks", async (_request, _params, url, principal) => {
    checkQuery(url, ["agent", "environment"]);
    const agent = url.searchParams.get("agent");
    const environment = url.searchParams.get("environment");
    const list = await webhooks.list({
      projectId: principal.projectId,
      ...(agent !== null ? { agentId: agent } : {}),
      ...(environment !== null ? { environment } : {}),
    });
    return json(200, { webhooks: list });
  });

  router.add("GET", "/webhooks/:webhookId", async (_request, { webhookId }, url, principal) => {
    checkQuery(url, []);
    return json(200, { webhook: await webhooks.get(webhookId!, principal.projectId) });
  });

  for (const [action, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    router.add(
      "POST",
      `/webhooks/:webhookId/${action}`,
      async (_request, { webhookId }, url, principal) => {
        checkQuery(url, []);
        return json(200, {
          webhook: await webhooks.setEnabled(webhookId!, principal.projectId, enabled),
        });
      },
    );
  }

  router.add(
    "POST",
    "/webhooks/:webhookId/rotate-token",
    async (_request, { webhookId }, url, principal) => {
      checkQuery(url, []);
      return json(200, await webhooks.rotateToken(webhookId!, principal.projectId));
    },
  );

  router.add("DELETE", "/webhooks/:webhookId", async (_request, { webhookId }, url, principal) => {
    checkQuery(url, []);
    await webhooks.remove(webhookId!, principal.projectId);
    return json(200, { deleted: true });
  });

  router.add(
    "GET",
    "/webhooks/:webhookId/requests",
    async (_request, { webhookId }, url, principal) => {
      checkQuery(url, []);
      return json(200, { requests: await webhooks.requests(webhookId!, principal.projectId) });
    },
  );
}

/** The ingress: `POST /agent-webhooks/<id>/<token>`, or `/agent-webhooks/<id>` with a Bearer token. */
export function webhookIngress(
  webhooks: Webhooks,
): (request: Request, url: URL) => Promise<Response> {
  const router = new Router();
  const receive = async (request: Request, id: string, token: string | null) => {
    const body = await readLimited(request, MAX_WEBHOOK_BODY_BYTES);
    const result = await webhooks.receive(id, token, request.headers, body);
    return json(result.status, {
      request: result.request,
      sessionId: result.request.sessionId,
      duplicate: result.duplicate,
    });
  };
  const noop = async () => json(404, {});
  router.add("POST", "/agent-webhooks/:id/:token", noop).add("POST", "/agent-webhooks/:id", noop);
  return async (request, url) => {
    const match = router.match(request.method, url.pathname);
    if (match.kind !== "found")
      throw new NotFoundError("webhook", url.pathname.slice(WEBHOOK_INGRESS_PREFIX.length, 80));
    const bearer = /^Bearer (\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? null;
    return receive(request, match.params.id!, match.params.token ?? bearer);
  };
}
