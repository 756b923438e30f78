import { sessionStatusShape } from "../records/session.ts";
import { object, record, string } from "../shape.ts";

/** The session's own life. `session.created` is always the first event of a log. */
export const sessionEvents = {
  "session.created": object({ agentId: string(), deploymentId: string() }),
  "session.status_changed": object({ from: sessionStatusShape, to: sessionStatusShape }),
  "session.labels_changed": object({ labels: record(string()) }),
  "session.ended": object({}),
};
