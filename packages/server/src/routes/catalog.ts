import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

/**
 * What the server lists under `/agents` and `/deployments`. The server does not know how
 * deployments are stored; `@opencomputer/build`'s `createDeploymentCatalog` is the
 * implementation `opencomputer dev` and `server` pass in.
 */
export interface Catalog {
  agents(): Promise<readonly object[]>;
  deployments(filter?: { agentId?: string }): Promise<readonly object[]>;
  /** Throws an error with code `not_found` for an unknown id. */
  deployment(id: string): Promise<object>;
}

export function catalogRoutes(router: Router, catalog: Catalog): void {
  router.add("GET", "/agents", async (_request, _params, url) => {
    checkQuery(url, []);
    return json(200, { agents: await catalog.agents() });
  });
  router.add("GET", "/deployments", async (_request, _params, url) => {
    checkQuery(url, ["agent"]);
    const agent = url.searchParams.get("agent");
    const deployments = await catalog.deployments(agent ? { agentId: agent } : {});
    return json(200, { deployments: deployments });
  });
  router.add("GET", "/deployments/:id", async (_request, { id }, url) => {
    checkQuery(url, []);
    return json(200, { deployment: await catalog.deployment(id!) });
  });
}
