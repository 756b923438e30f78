// Schedules: what is deployed, run history, one run, and "run now". Scheduling itself is the
// Scheduler's (started by whoever runs the server); these routes read and ask.

import { InputError, NotFoundError, type TriggerStore } from "@opencomputer/runtime";
import type { ScheduleCatalog, Scheduler } from "@opencomputer/schedules";
import { listRuns, publicRun } from "@opencomputer/schedules";
import { onlyFields, readJsonObject } from "../body.ts";
import type { RouteContext } from "../context.ts";
import { invalidInput, invalidQuery } from "../errors.ts";
import { checkQuery, intParam } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

export interface SchedulesOptions {
  scheduler: Pick<Scheduler, "runNow">;
  store: TriggerStore;
  catalog: ScheduleCatalog;
  /** The project the scheduler runs for; other projects' keys see no schedules. */
  projectId: string;
}

const ENVIRONMENTS = ["development", "production"];
const STATUSES = ["claimed", "started", "completed", "failed", "cancelled", "skipped", "missed"];

export function scheduleRoutes(router: Router, ctx: RouteContext, options: SchedulesOptions): void {
  const mine = (projectId: string) => projectId === options.projectId;

  router.add("GET", "/schedules", async (_request, _params, url, principal) => {
    checkQuery(url, ["agent"]);
    const agent = url.searchParams.get("agent");
    const deployed = mine(principal.projectId) ? await options.catalog.list() : [];
    return json(200, {
      schedules: deployed
        .filter((d) => agent === null || d.agentId === agent)
        .map((d) => ({ agentId: d.agentId, deploymentId: d.deploymentId, ...d.schedule })),
    });
  });

  router.add(
    "GET",
    "/schedules/:agent/:schedule/runs",
    async (_request, params, url, principal) => {
      checkQuery(url, ["environment", "status", "limit", "cursor"]);
      const environment = url.searchParams.get("environment");
      const status = url.searchParams.get("status");
      const cursor = url.searchParams.get("cursor");
      if (environment !== null && !ENVIRONMENTS.includes(environment))
        throw invalidQuery("environment", "must be development or production");
      if (status !== null && !STATUSES.includes(status))
        throw invalidQuery("status", `must be one of ${STATUSES.join(", ")}`);
      try {
        const page = await listRuns(options.store, {
          projectId: principal.projectId,
          agentId: params.agent!,
          scheduleId: params.schedule!,
          limit: intParam(url, "limit", 1, 200, 50),
          ...(environment !== null ? { environment } : {}),
          ...(status !== null ? { status: status as never } : {}),
          ...(cursor !== null ? { cursor } : {}),
        });
        return json(200, page);
      } catch (error) {
        if (error instanceof InputError) throw invalidQuery("cursor", error.message);
        throw error;
      }
    },
  );

  router.add("GET", "/schedule-runs/:runId", async (_request, { runId }, url, principal) => {
    checkQuery(url, []);
    const run = await options.store.getScheduleRun(runId!);
    if (!run || run.projectId !== principal.projectId)
      throw new NotFoundError("schedule run", runId!);
    return json(200, { run: publicRun(run) });
  });

  router.add("POST", "/schedules/:agent/:schedule/run", async (request, params, url, principal) => {
    checkQuery(url, []);
    const body = await readJsonObject(request, ctx.maxBodyBytes);
    onlyFields(body, ["environment"]);
    const environment = body.environment ?? "production";
    if (typeof environment !== "string" || !ENVIRONMENTS.includes(environment))
      throw invalidInput("environment", "must be development or production");
    if (!mine(principal.projectId))
      throw new NotFoundError("schedule", `${params.agent}/${params.schedule}`);
    const run = await options.scheduler.runNow({
      environment,
      agentId: params.agent!,
      scheduleId: params.schedule!,
    });
    return json(202, { run: publicRun(run) });
  });
}
