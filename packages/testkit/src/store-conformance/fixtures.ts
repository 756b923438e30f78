// Records the conformance sections share. No vitest here: child processes the store tests
// start (store-sqlite test/fixtures) build their records with it too.
import type {
  MessageRecord,
  NewEvent,
  ResultRecord,
  SessionRecord,
  ToolCallRecord,
  TurnRecord,
} from "@opencomputer/runtime";

let counter = 0;
export const uid = (prefix: string) => `${prefix}_${(++counter).toString().padStart(6, "0")}`;
export const OLD = "2020-01-01T00:00:00.000Z";
export const T = 1_000_000; // a `now` far in the past, so real time never interferes with leases

export function sessionRecord(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: uid("ses"),
    projectId: "default",
    agentId: "agent_a",
    deploymentId: "dep_1",
    environment: "production",
    status: "new",
    source: "api",
    labels: {},
    executionMode: "default",
    result: null,
    question: null,
    runtime: {},
    revision: 1,
    lastSeq: 0,
    idempotencyKey: null,
    lease: null,
    createdAt: OLD,
    updatedAt: OLD,
    ...over,
  };
}

export function createdEvents(s: SessionRecord): NewEvent[] {
  return [{ type: "session.created", data: { agentId: s.agentId, deploymentId: s.deploymentId } }];
}

export function turnRecord(sessionId: string, over: Partial<TurnRecord> = {}): TurnRecord {
  return {
    id: uid("turn"),
    sessionId,
    input: { source: "user", text: "hello" },
    mode: "queue",
    status: "queued",
    outcome: null,
    error: null,
    idempotencyKey: null,
    steps: 0,
    createdAt: OLD,
    updatedAt: OLD,
    startedAt: null,
    settledAt: null,
    ...over,
  };
}

export function messageRecord(sessionId: string, turnId: string, id = uid("msg")): MessageRecord {
  return {
    id,
    sessionId,
    turnId,
    role: "assistant",
    content: [{ type: "text", text: id }],
    createdAt: OLD,
  };
}

export function toolCallRecord(
  sessionId: string,
  turnId: string,
  over: Partial<ToolCallRecord> = {},
) {
  const call: ToolCallRecord = {
    sessionId,
    callId: uid("call"),
    turnId,
    messageId: "msg_x",
    tool: "lookup_order",
    input: { orderId: "A1" },
    status: "started",
    output: null,
    error: null,
    attempts: 1,
    startedAt: OLD,
    settledAt: null,
    ...over,
  };
  return call;
}

export function resultRecord(sessionId: string, turnId: string, over: Partial<ResultRecord> = {}) {
  const record: ResultRecord = {
    resultId: uid("res"),
    agentId: "agent_a",
    deploymentId: "dep_1",
    sessionId,
    turnId,
    messageId: "msg_x",
    toolCallId: uid("call"),
    resultTool: "report",
    schemaDigest: "sha256:aa",
    dataDigest: "sha256:bb",
    data: { ok: true },
    createdAt: OLD,
    ...over,
  };
  return record;
}

/**
 * An event as a Store sees it: opaque. The engine writes only protocol events, but a store keeps
 * whatever it is given, so its tests may use any type and data (checked nowhere at this level).
 */
export const ev = (type: string, data: unknown = {}, turnId?: string): NewEvent =>
  (turnId === undefined ? { type, data } : { type, turnId, data }) as NewEvent;
