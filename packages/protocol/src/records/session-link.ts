// What a session carries from its creation besides its agent: the application's session data
// and, for a subagent's session, the parent session and call that started it. Both are fixed at
// creation and recorded in the session's first event (`session.created`).

import { type Infer, integer, json, named, object, record, string } from "../shape.ts";

/** `POST /sessions {data}`: at most this many bytes of JSON (UTF-8). */
export const SESSION_DATA_LIMIT_BYTES = 64 * 1024;

/** Session data: a JSON object whose values `useSessionData(key)` reads. */
export const sessionDataShape = named("SessionData", record(json()));
export type SessionData = Infer<typeof sessionDataShape>;

/** A subagent's session: the session and tool call that delegated to it. */
export const sessionParentShape = named(
  "SessionParent",
  object({
    sessionId: string(),
    turnId: string(),
    callId: string(),
    /** The parent's agent. */
    agentId: string(),
    /** 1 for a child of a session made through the API, 2 for its child, and so on. */
    depth: integer(),
  }),
);
export type SessionParent = Infer<typeof sessionParentShape>;
