import { sessionStatusShape } from "../records/session.ts";
import { sessionDataShape, sessionParentShape } from "../records/session-link.ts";
import { budgetShape } from "../records/usage.ts";
import { object, optional, record, string } from "../shape.ts";

/** The session's own life. `session.created` is always the first event of a log. */
export const sessionEvents = {
  "session.created": object({
    agentId: string(),
    deploymentId: string(),
    /** The session data it was created with, when there was any. */
    data: optional(sessionDataShape),
    /** For a subagent's session: who delegated to it. */
    parent: optional(sessionParentShape),
    /** What the session may spend, when it was created with a budget. */
    budget: optional(budgetShape),
  }),
  "session.status_changed": object({ from: sessionStatusShape, to: sessionStatusShape }),
  "session.labels_changed": object({ labels: record(string()) }),
  "session.ended": object({}),
};
