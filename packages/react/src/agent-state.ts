// What a session's event log folds into (fold.ts builds it): the timeline a person reads, the
// open question and approvals, and the inspection views (renders, egress, usage, memory saves).

import type { EgressRequest, Render, TurnUsage } from "./fold-inspect.ts";
import type { AgentInput, ApprovalCard, ApprovalStatus, JsonValue } from "./types.ts";

export interface Message {
  id: string;
  role: "user" | "assistant";
  text: string;
}

export interface Question {
  id: string;
  turnId?: string;
  text: string;
  options: Array<{ label: string; value: string }>;
  askedAt?: string;
}

export interface Approval {
  id: string;
  turnId?: string;
  callId: string;
  tool: string;
  input: JsonValue;
  card: ApprovalCard;
  status: ApprovalStatus;
  decidedBy?: string;
  outcome?: JsonValue;
  /** Why an apply failed or is unconfirmed. */
  message?: string;
  /** An apply that applied but returned a value recorded as its description. */
  warning?: string;
  attempts: number;
}

/** Where an item sits: the seq that placed it and its turn. */
export type ItemBase0 = { seq: number; turnId?: string };

interface ItemBase {
  /** Stable across polls and reloads: React keys and de-duplication use it. */
  key: string;
  seq: number;
  turnId?: string;
}

export type TimelineItem =
  | (ItemBase & { kind: "user"; text: string; input: AgentInput; mode?: string })
  | (ItemBase & { kind: "assistant"; text: string; streaming: boolean })
  | (ItemBase & {
      kind: "tool";
      callId: string;
      tool: string;
      title: string;
      input: JsonValue;
      status: "running" | "completed" | "failed";
      progress: JsonValue[];
      output?: JsonValue;
      result?: boolean;
      message?: string;
      settledBy?: string;
      /** For a delegation call (`subagent_<id>`): the child session and what it waits for. */
      subagent?: SubagentLink;
    })
  | (ItemBase & { kind: "question"; questionId: string; text: string; answered?: string })
  | (ItemBase & { kind: "approval"; approvalId: string })
  | (ItemBase & {
      kind: "turn";
      status: "completed" | "failed" | "cancelled";
      code?: string;
      message?: string;
    })
  | (ItemBase & { kind: "notice"; text: string });

/** The child session a delegation call runs, and the person it waits for, if any. */
export interface SubagentLink {
  agentId: string;
  sessionId: string;
  waiting?: {
    reason: "question" | "approval";
    questionId?: string;
    approvalId?: string;
    text?: string;
  };
}

export interface AgentState {
  /** The seq of the last event folded in; the next poll asks for `after=cursor`. */
  cursor: number;
  items: TimelineItem[];
  messages: Message[];
  question: Question | null;
  approvals: Approval[];
  /** Latest session status seen in the log (`session.status_changed`), null before any. */
  status: string | null;
  /** Turns queued or running: the session is busy while any is open. */
  openTurns: string[];
  /** Events whose seq did not follow the cursor: the caller re-reads from `cursor`. */
  gap: boolean;
  /** Every render of the agent (`agent.rendered`), in order. */
  renders: Render[];
  /** Requests made through connections, in order, with their status once answered. */
  egress: EgressRequest[];
  /** Tokens and cost per turn (`usage.recorded`), in order; `usageTotal` sums them. */
  usage: TurnUsage[];
  /** `memory.saved` events seen so far, oldest first: a hint to re-read those documents. */
  memorySaves: MemorySave[];
}

/** One `memory.saved`: which document changed, to which revision, and its size. */
export interface MemorySave {
  seq: number;
  turnId?: string;
  resource: string;
  documentId: string;
  revision: string;
  bytes: number;
  /** The HTTP provider's write tool that saved (absent for document memory). */
  tool?: string;
}

export const emptyState: AgentState = Object.freeze({
  cursor: 0,
  items: [],
  messages: [],
  question: null,
  approvals: [],
  status: null,
  openTurns: [],
  gap: false,
  renders: [],
  egress: [],
  usage: [],
  memorySaves: [],
}) as AgentState;
