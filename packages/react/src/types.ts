// Wire shapes of the management API (docs/api.md) as the client reads them. Fields the client
// does not interpret stay `unknown` so a server that adds fields never breaks a client.

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** One event of a session's log: `seq` starts at 1, is gapless, and never changes. */
export interface SessionEvent {
  seq: number;
  id: string;
  timestamp: string;
  sessionId: string;
  turnId?: string;
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: event data is read per type, loosely, by the fold
  data: any;
}

export type SessionStatus = "new" | "idle" | "running" | "waiting_runtime" | "failed" | "ended";

export interface AgentInput {
  source?: string;
  text?: string;
  payload?: JsonValue;
  answer?: { questionId: string; text?: string; value?: string };
}

/** The session's computer (PLATFORM.md "Computers"). */
export interface RuntimeState {
  generation: number;
  state: "none" | "running" | "released";
  startedAt?: string | null;
  expiresAt?: string | null;
  releasedAt?: string | null;
  releaseReason?: string | null;
  replacedAt?: string | null;
  replacementReason?: string | null;
  lifetimeSeconds?: number;
  idleReleaseSeconds?: number;
}

export interface SessionResult {
  turnId: string;
  callId: string;
  reportedAt: string;
  data: JsonValue;
}

export interface TurnRecord {
  id: string;
  input: AgentInput;
  mode: string;
  status: string;
  createdAt: string;
  updatedAt: string;
}

export interface Session {
  id: string;
  agentId: string;
  deploymentId: string;
  environment: string;
  status: SessionStatus;
  source: string;
  labels: Record<string, string>;
  turns?: TurnRecord[];
  result: SessionResult | null;
  question: unknown;
  runtime: RuntimeState | null;
  revision: number;
  createdAt: string;
  updatedAt: string;
  activity?: { activeTurnId: string | null; queued: number; lastSettledTurn: unknown };
}

export type ApprovalStatus =
  | "pending"
  | "approved"
  | "denied"
  | "applying"
  | "applied"
  | "failed"
  | "unconfirmed"
  | "dismissed";

export interface ApprovalCard {
  title: string;
  summary?: string;
  facts?: Array<{ label: string; value: string }>;
}

export interface ApprovalRecord {
  id: string;
  sessionId: string;
  turnId: string;
  toolCallId: string;
  tool: string;
  input: JsonValue;
  card: ApprovalCard;
  status: ApprovalStatus;
  decision: { id: string; decidedAt: string; decidedBy?: string } | null;
  outcome: JsonValue;
  error: string | null;
  attempts: number;
}

/** `{ error: { code, message, path? } }`, the body of every failed API call. */
export interface ApiErrorBody {
  code: string;
  message: string;
  path?: string;
}
