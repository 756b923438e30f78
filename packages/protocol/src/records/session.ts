// The session and turn records the management API returns (GET /sessions/<id>, the list rows).

import {
  array,
  type Infer,
  integer,
  json,
  named,
  nullable,
  object,
  oneOf,
  optional,
  record,
  string,
} from "../shape.ts";
import { agentInputShape } from "./input.ts";
import { memoryBindingViewShape } from "./memory.ts";
import { sessionDataShape, sessionParentShape } from "./session-link.ts";
import { budgetShape } from "./usage.ts";

export const SESSION_STATUSES = [
  "new",
  "idle",
  "running",
  "waiting_runtime",
  "failed",
  "ended",
] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const SESSION_SOURCES = ["api", "playground", "webhook", "schedule"] as const;
export type SessionSource = (typeof SESSION_SOURCES)[number];

export const EXECUTION_MODES = ["default", "microvm"] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

export const TURN_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];

export const TURN_MODES = ["queue", "steer", "interrupt"] as const;
export type TurnMode = (typeof TURN_MODES)[number];

/** Why a turn failed: a public failure code (failure-codes.ts) and a message for people. */
export const turnErrorShape = named(
  "TurnError",
  object({
    code: string(),
    message: string(),
    model: optional(string()),
    tool: optional(string()),
  }),
);

/** A session status, by name in the docs. */
export const sessionStatusShape = named("SessionStatus", oneOf(SESSION_STATUSES));
export type TurnError = Infer<typeof turnErrorShape>;

export const turnViewShape = named(
  "Turn",
  object({
    id: string(),
    input: agentInputShape,
    mode: named("TurnMode", oneOf(TURN_MODES)),
    status: named("TurnStatus", oneOf(TURN_STATUSES)),
    /** How a completed turn ended: `completed`, `question` or `steered`. */
    outcome: nullable(string()),
    error: nullable(turnErrorShape),
    createdAt: string(),
    updatedAt: string(),
  }),
);
export type TurnView = Infer<typeof turnViewShape>;

/** `session.result`: the latest committed output of the agent's result tool. */
export const sessionResultShape = named(
  "SessionResult",
  object({
    turnId: string(),
    callId: string(),
    reportedAt: string(),
    data: json(),
  }),
);
export type SessionResult = Infer<typeof sessionResultShape>;

export const questionOptionShape = object({ label: string(), value: string() });

/** `session.question` while a question is open. */
export const openQuestionShape = named(
  "Question",
  object({
    id: string(),
    turnId: string(),
    callId: string(),
    text: string(),
    options: array(questionOptionShape),
    askedAt: string(),
    /** Inputs that arrived while the question was open; delivered with the answer as steering. */
    held: array(json()),
  }),
);
export type OpenQuestion = Infer<typeof openQuestionShape>;

/** `session.runtime`: the session's computer (PLATFORM "Computers"). */
export const runtimeStateShape = named(
  "Computer",
  object({
    generation: integer(),
    state: oneOf(["none", "running", "released"]),
    startedAt: optional(string()),
    expiresAt: optional(string()),
    releasedAt: optional(nullable(string())),
    releaseReason: optional(nullable(string())),
    replacedAt: optional(string()),
    replacementReason: optional(nullable(string())),
    lifetimeSeconds: optional(integer()),
    idleReleaseSeconds: optional(integer()),
  }),
);
export type RuntimeState = Infer<typeof runtimeStateShape>;

const sessionFields = {
  id: string(),
  projectId: string(),
  agentId: string(),
  deploymentId: string(),
  environment: string(),
  executionMode: oneOf(EXECUTION_MODES),
  status: sessionStatusShape,
  source: oneOf(SESSION_SOURCES),
  labels: record(string()),
  result: nullable(sessionResultShape),
  question: nullable(openQuestionShape),
  runtime: runtimeStateShape,
  /** Grows on every change of status, turns, labels or result. */
  revision: integer(),
  createdAt: string(),
  updatedAt: string(),
};

/** `GET /sessions/<id>`. */
export const sessionViewShape = object({
  ...sessionFields,
  turns: array(turnViewShape),
  /** The memory the session was bound to at creation (docs/memory.md). */
  memory: array(memoryBindingViewShape),
  /** Set at creation (`POST /sessions {data}`); `{}` when none was given. */
  data: sessionDataShape,
  /** The session and call that delegated to this one; null for a session made through the API. */
  parent: nullable(sessionParentShape),
  /** What the session may spend (`POST /sessions {budget}`); absent when it has no budget. */
  budget: optional(budgetShape),
});
export type SessionView = Infer<typeof sessionViewShape>;

export const sessionActivityShape = object({
  activeTurnId: nullable(string()),
  queued: integer(),
  lastSettledTurn: nullable(turnViewShape),
});
export type SessionActivity = Infer<typeof sessionActivityShape>;

/** Whom a session waits for when a person must act: an open question, or an approval to decide. */
export const WAITING_FOR = ["answer", "approval"] as const;
export type WaitingFor = (typeof WAITING_FOR)[number];

/**
 * A row of `GET /sessions`: the session without turns, with its current activity, what it waits
 * for a person to do (`answer` an open question, decide an `approval` that is pending or
 * unconfirmed; null when nothing), and the text of its first message (null before any, or when
 * the first input carried only a payload).
 */
export const sessionListRowShape = object({
  ...sessionFields,
  activity: sessionActivityShape,
  waitingFor: nullable(named("WaitingFor", oneOf(WAITING_FOR))),
  firstMessage: nullable(string()),
});
export type SessionListRow = Infer<typeof sessionListRowShape>;
