// The management API's shapes as the client reads them: all from @opencomputer/protocol, the one
// definition the server writes them with. A server that adds event types or fields never
// breaks the client: unknown event types are folded as informational.

export type {
  AgentInput,
  ApiErrorDetail,
  ApprovalCard,
  ApprovalStatus,
  ApprovalView,
  JsonValue,
  RuntimeState,
  SessionEvent,
  SessionListRow,
  SessionResult,
  SessionStatus,
  SessionView,
  TurnInput,
  TurnView,
} from "@opencomputer/protocol";

import type { SessionView } from "@opencomputer/protocol";

/** `GET /sessions/<id>`: the session with its turns. */
export type Session = SessionView;
