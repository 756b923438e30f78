import { integer, object, string } from "../shape.ts";

const target = { connectionId: string(), method: string(), path: string() };

/** Requests through the egress gateway; `path` never includes the query string. */
export const egressEvents = {
  "egress.request": object(target),
  "egress.response": object({ ...target, status: integer(), durationMs: integer() }),
  "egress.failed": object({ ...target, message: string() }),
};
