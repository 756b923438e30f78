import type { RouteContext } from "../context.ts";
import { invalidInput } from "../errors.ts";
import { checkQuery, intParam } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";
import { eventStream } from "../sse.ts";

const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** `Last-Event-ID` (sent by EventSource on reconnect) wins over `?after=`, which the URL keeps. */
function cursorOf(request: Request, url: URL): number {
  const after = intParam(url, "after", 0, MAX_SEQ, 0);
  const last = request.headers.get("last-event-id");
  if (last === null || last.trim() === "") return after;
  if (!/^\d{1,15}$/.test(last.trim()))
    throw invalidInput("Last-Event-ID", "must be the seq of an event");
  return Number(last.trim());
}

const wantsStream = (request: Request): boolean =>
  (request.headers.get("accept") ?? "").toLowerCase().includes("text/event-stream");

export function eventRoutes(router: Router, ctx: RouteContext): void {
  router.add("GET", "/sessions/:id/events", async (request, { id }, url) => {
    checkQuery(url, ["after"]);
    const after = cursorOf(request, url);
    // Read the first page before answering so an unknown session is a JSON 404, not a stream.
    const first = await ctx.sessions.events(id!, after);
    if (!wantsStream(request)) return json(200, { events: first });
    return new Response(eventStream(ctx, id!, after, first, request.signal), {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        // Stops nginx-style proxies from buffering the stream.
        "x-accel-buffering": "no",
      },
    });
  });
}
