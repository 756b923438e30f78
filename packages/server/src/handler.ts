import type { EventSubscriptions } from "@opencomputer/event-delivery";
import type { Runtime, UsageStore } from "@opencomputer/runtime";
import type { Webhooks } from "@opencomputer/webhooks";
import type { Auth } from "./auth.ts";
import { checkContentLength, DEFAULT_MAX_BODY_BYTES } from "./body.ts";
import type { RouteContext } from "./context.ts";
import { HttpError } from "./errors.ts";
import { matchRoute } from "./platform-paths.ts";
import { errorResponse } from "./respond.ts";
import { notFound, Router } from "./router.ts";
import { approvalRoutes } from "./routes/approvals.ts";
import { type Catalog, catalogRoutes } from "./routes/catalog.ts";
import { eventSubscriptionRoutes } from "./routes/event-subscriptions.ts";
import { eventRoutes } from "./routes/events.ts";
import { memoryRoutes } from "./routes/memory.ts";
import { resultRoutes } from "./routes/results.ts";
import { type SchedulesOptions, scheduleRoutes } from "./routes/schedules.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { turnRoutes } from "./routes/turns.ts";
import { usageRoutes } from "./routes/usage.ts";
import { WEBHOOK_INGRESS_PREFIX, webhookIngress, webhookRoutes } from "./routes/webhooks.ts";
import { checkScope } from "./scope.ts";
import { type ConsoleOptions, createConsoleFiles } from "./static.ts";

export interface HandlerOptions {
  runtime: Pick<Runtime, "sessions" | "approvals"> & Partial<Pick<Runtime, "memory">>;
  auth: Auth;
  /** Largest request body accepted (default 1 MiB); larger ones get 413 `body_too_large`. */
  maxBodyBytes?: number;
  /** SSE fallback poll for events written by other processes (default 500 ms). */
  pollMs?: number;
  /** SSE heartbeat comment interval (default 15 s). */
  heartbeatMs?: number;
  /** Serves `GET /agents`, `/deployments`, `/deployments/<id>` (e.g. @opencomputer/build's catalog). */
  catalog?: Catalog;
  /** Serves the built web console at `/console/` (static files only need no key; see static.ts). */
  console?: ConsoleOptions;
  /** Serves `/schedules…` and `/schedule-runs/<id>` (see @opencomputer/schedules). */
  schedules?: SchedulesOptions;
  /** Serves `/webhooks…` and the ingress `POST /agent-webhooks/<id>/<token>` (no API key). */
  webhooks?: Webhooks;
  /** Serves `/event-subscriptions…` (see @opencomputer/event-delivery). */
  eventSubscriptions?: EventSubscriptions;
  /** Serves `GET /usage`, the project's usage roll-up (e.g. createSqliteUsageStore). */
  usage?: UsageStore;
  /** Called with every unexpected error (the client only sees a generic 500). */
  onError?: (error: unknown) => void;
}

export type Handler = (request: Request) => Promise<Response>;

/** The management API as a web-standard handler, mountable in any host that speaks Request/Response. */
export function createHandler(options: HandlerOptions): Handler {
  const ctx: RouteContext = {
    sessions: options.runtime.sessions,
    approvals: options.runtime.approvals,
    ...(options.runtime.memory ? { memory: options.runtime.memory } : {}),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    pollMs: options.pollMs ?? 500,
    heartbeatMs: options.heartbeatMs ?? 15_000,
  };
  const log =
    options.onError ??
    ((error: unknown) =>
      console.error(
        JSON.stringify({ level: "error", message: "request failed", error: String(error) }),
      ));
  const router = new Router();
  sessionRoutes(router, ctx);
  turnRoutes(router, ctx);
  eventRoutes(router, ctx);
  resultRoutes(router, ctx);
  approvalRoutes(router, ctx);
  memoryRoutes(router, ctx);
  if (options.catalog) catalogRoutes(router, options.catalog);
  if (options.schedules) scheduleRoutes(router, ctx, options.schedules);
  if (options.webhooks) webhookRoutes(router, ctx, options.webhooks);
  if (options.eventSubscriptions) eventSubscriptionRoutes(router, ctx, options.eventSubscriptions);
  if (options.usage) usageRoutes(router, options.usage);
  const ingress = options.webhooks ? webhookIngress(options.webhooks) : null;

  const consoleFiles = options.console ? createConsoleFiles(options.console) : null;
  return async (request) => {
    try {
      const file = consoleFiles && (await consoleFiles(request));
      if (file) return file;
      // A webhook's sender proves itself with the webhook's token, not an API key.
      if (ingress && new URL(request.url).pathname.startsWith(WEBHOOK_INGRESS_PREFIX))
        return await ingress(request, new URL(request.url));
      const key = request.headers.get("x-api-key");
      const principal = key ? await options.auth.verify(key) : null;
      if (!principal) throw new HttpError("unauthorized", "Missing or unknown x-api-key");
      checkContentLength(request, ctx.maxBodyBytes);
      const url = new URL(request.url);
      const { match, path } = matchRoute(router, request.method, url.pathname, principal.projectId);
      if (match.kind === "not_found") throw notFound(url.pathname);
      if (match.kind === "method_not_allowed") {
        const response = errorResponse(
          new HttpError(
            "method_not_allowed",
            `${request.method.slice(0, 20)} is not allowed here; use ${match.allow.join(", ")}`,
          ),
          log,
        );
        response.headers.set("allow", match.allow.join(", "));
        return response;
      }
      await checkScope(ctx, path, match.params, principal.projectId);
      return await match.handler(request, match.params, url, principal);
    } catch (error) {
      return errorResponse(error, log);
    }
  };
}
