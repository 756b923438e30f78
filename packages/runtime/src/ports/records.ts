// The rows a Store keeps. Plain JSON-compatible data: a Store may hold them in any form, but it
// hands back exactly what it was given.
import type {
  AgentInput,
  ApprovalCard,
  ApprovalStatus,
  ExecutionMode,
  JsonValue,
  SessionEvent,
  SessionResult,
  SessionSource,
  SessionStatus,
  TurnError,
  TurnMode,
  TurnStatus,
} from "@opencomputer/protocol";

// The shapes clients also see come from the protocol; this file adds what only a Store keeps.
export type {
  ApprovalStatus,
  ExecutionMode,
  SessionResult,
  SessionSource,
  SessionStatus,
  TurnError,
  TurnMode,
  TurnStatus,
};

/** A runtime's claim on a session. `epoch` grows on every change of holder (fencing token). */
export interface Lease {
  runtimeId: string;
  epoch: number;
  /** Milliseconds since the Unix epoch. */
  expiresAt: number;
}

export interface SessionRecord {
  id: string;
  /** The project the session belongs to; API keys see only their own project's sessions. */
  projectId: string;
  agentId: string;
  deploymentId: string;
  environment: string;
  status: SessionStatus;
  source: SessionSource;
  labels: Record<string, string>;
  executionMode: ExecutionMode;
  result: SessionResult | null;
  question: JsonValue | null;
  runtime: JsonValue;
  /** Grows on every change of status, turns, labels or result. */
  revision: number;
  /** The seq of the last event appended; 0 before the first. */
  lastSeq: number;
  idempotencyKey: string | null;
  lease: Lease | null;
  createdAt: string;
  updatedAt: string;
}

export interface TurnRecord {
  id: string;
  sessionId: string;
  input: AgentInput;
  mode: TurnMode;
  status: TurnStatus;
  /** How a completed turn ended: "completed", or "question" when it asked. */
  outcome: string | null;
  error: TurnError | null;
  idempotencyKey: string | null;
  /** Model steps taken so far. */
  steps: number;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  settledAt: string | null;
}

export type MessageRole = "user" | "assistant" | "tool";

/** One conversation message, in the model provider spec's prompt form (role + content parts). */
export interface MessageRecord {
  id: string;
  sessionId: string;
  turnId: string;
  role: MessageRole;
  content: JsonValue;
  createdAt: string;
}

export type ToolCallStatus = "started" | "completed" | "failed";

export interface ToolCallRecord {
  sessionId: string;
  callId: string;
  turnId: string;
  messageId: string;
  tool: string;
  input: JsonValue;
  status: ToolCallStatus;
  output: JsonValue | null;
  error: string | null;
  /** Times `run()` was started for this call (more than 1 after a crash). */
  attempts: number;
  startedAt: string;
  settledAt: string | null;
}

/** An immutable record of one successful result-tool call. */
export interface ResultRecord {
  resultId: string;
  agentId: string;
  deploymentId: string;
  sessionId: string;
  turnId: string;
  messageId: string;
  toolCallId: string;
  resultTool: string;
  schemaDigest: string;
  dataDigest: string;
  data: JsonValue;
  createdAt: string;
}

/** A stored event: the protocol's envelope and one of its typed event types. */
export type EventRecord = SessionEvent;

/** One proposed write waiting for (or carrying) a person's decision. */
export interface ApprovalRecord {
  id: string;
  sessionId: string;
  turnId: string;
  toolCallId: string;
  agentId: string;
  deploymentId: string;
  tool: string;
  /** The arguments on the card: exactly what `apply` receives. */
  input: JsonValue;
  card: ApprovalCard;
  /** `sha256:` over the tool, input and card: what runs is what was shown. */
  digest: string;
  status: ApprovalStatus;
  decision: { id: string; decidedAt: string; decidedBy?: string } | null;
  outcome: JsonValue | null;
  error: string | null;
  /** Times `apply` was started. */
  attempts: number;
  /** The runtime applying it, and since when (to tell a live apply from a lost one). */
  claimedBy: string | null;
  claimedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
