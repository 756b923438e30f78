// Every event type a session's log can hold, with the shape of its `data`. The union types
// below are derived from this one table, so a type can only be emitted once it is listed here.

import { type Infer, integer, optional, string } from "../shape.ts";
import { approvalEvents } from "./approval-events.ts";
import { capabilityEvents } from "./capability-events.ts";
import { egressEvents } from "./egress-events.ts";
import { memoryEvents } from "./memory-events.ts";
import { messageEvents } from "./message-events.ts";
import { questionEvents } from "./question-events.ts";
import { runtimeEvents } from "./runtime-events.ts";
import { sessionEvents } from "./session-events.ts";
import { subagentEvents } from "./subagent-events.ts";
import { toolEvents } from "./tool-events.ts";
import { turnEvents } from "./turn-events.ts";

/** The families in the order docs/api.md lists them. */
export const EVENT_FAMILIES = {
  session: sessionEvents,
  turn: turnEvents,
  message: messageEvents,
  tool: toolEvents,
  question: questionEvents,
  approval: approvalEvents,
  runtime: runtimeEvents,
  egress: egressEvents,
  memory: memoryEvents,
  capability: capabilityEvents,
  subagent: subagentEvents,
} as const;

export const EVENT_DATA = {
  ...sessionEvents,
  ...turnEvents,
  ...messageEvents,
  ...toolEvents,
  ...questionEvents,
  ...approvalEvents,
  ...runtimeEvents,
  ...egressEvents,
  ...memoryEvents,
  ...capabilityEvents,
  ...subagentEvents,
} as const;

export type EventType = keyof typeof EVENT_DATA;
export type EventData<T extends EventType> = Infer<(typeof EVENT_DATA)[T]>;

export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_DATA, type);
}

/** An event as its producer hands it to the store: the store adds seq, id and timestamp. */
export type NewEvent = {
  [T in EventType]: { type: T; turnId?: string; data: EventData<T> };
}[EventType];

/** The fields every stored event has, whatever its type. */
export const envelopeFields = {
  /** Starts at 1 and is gapless per session; events at or below a cursor never change. */
  seq: integer(),
  id: string(),
  timestamp: string(),
  sessionId: string(),
  turnId: optional(string()),
};

/** One event of a session's log (`GET /sessions/<id>/events`, SSE). */
export type SessionEvent = {
  [T in EventType]: {
    seq: number;
    id: string;
    timestamp: string;
    sessionId: string;
    turnId?: string;
    type: T;
    data: EventData<T>;
  };
}[EventType];

/** The event of one type, e.g. `EventOf<"tool.completed">`. */
export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;
