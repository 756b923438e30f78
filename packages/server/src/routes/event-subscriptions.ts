// Event subscriptions (HTTPS destinations) and their delivery records, under the API key's
// project: `/event-subscriptions…`, also served as `/api/managed-agents/projects/<p>/…`.
import type { EventSubscriptions } from "@opencomputer/event-delivery";
import { onlyFields, readJsonObject } from "../body.ts";
import type { RouteContext } from "../context.ts";
import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

const BASE = "/event-subscriptions";

/** The query parameters that are present, by name. */
function params(url: URL, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = url.searchParams.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

export function eventSubscriptionRoutes(
  router: Router,
  ctx: RouteContext,
  subs: EventSubscriptions,
): void {
  router.add("POST", BASE, async (request, _params, url, principal) => {
    checkQuery(url, []);
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, ["environment", "agentId", "events", "destination"]);
    return json(201, await subs.create({ ...body, projectId: principal.projectId }));
  });

  router.add("GET", BASE, async (_request, _params, url, principal) => {
    checkQuery(url, ["environment", "agentId"]);
    const filter = params(url, ["environment", "agentId"]);
    return json(200, {
      subscriptions: await subs.list({ ...filter, projectId: principal.projectId }),
    });
  });

  router.add("GET", `${BASE}/:id`, async (_request, { id }, url, principal) => {
    checkQuery(url, []);
    return json(200, { subscription: await subs.get(id!, principal.projectId) });
  });

  router.add("DELETE", `${BASE}/:id`, async (_request, { id }, url, principal) => {
    checkQuery(url, []);
    await subs.remove(id!, principal.projectId);
    return new Response(null, { status: 204 });
  });

  for (const [action, status] of [
    ["pause", "paused"],
    ["resume", "active"],
  ] as const) {
    router.add("POST", `${BASE}/:id/${action}`, async (_request, { id }, url, principal) => {
      checkQuery(url, []);
      return json(200, { subscription: await subs.setStatus(id!, principal.projectId, status) });
    });
  }

  router.add("POST", `${BASE}/:id/rotate-secret`, async (_request, { id }, url, principal) => {
    checkQuery(url, []);
    return json(200, await subs.rotateSecret(id!, principal.projectId));
  });

  router.add("GET", `${BASE}/:id/deliveries`, async (_request, { id }, url, principal) => {
    const names = ["status", "sessionId", "after", "limit"];
    checkQuery(url, names);
    return json(200, await subs.deliveries(id!, principal.projectId, params(url, names)));
  });

  router.add(
    "GET",
    `${BASE}/:id/deliveries/:deliveryId`,
    async (_request, { id, deliveryId }, url, principal) => {
      checkQuery(url, []);
      return json(200, {
        delivery: await subs.delivery(id!, principal.projectId, deliveryId!),
      });
    },
  );

  router.add("POST", `${BASE}/:id/replay`, async (request, { id }, url, principal) => {
    checkQuery(url, []);
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, [
      "deliveryIds",
      "sessionId",
      "fromSequence",
      "toSequence",
      "since",
      "until",
      "limit",
    ]);
    return json(202, { deliveries: await subs.replay(id!, principal.projectId, body) });
  });
}
