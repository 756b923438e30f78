import type { AgentInput } from "@opencomputer/agent";
import type {
  ApprovalCard as Card,
  OpenQuestion as Question,
  SessionEvent,
  SessionStatus,
} from "@opencomputer/protocol";

/** An approval as the one-shot shows it (a subset of `GET /approvals/<id>`). */
export interface ApprovalCard {
  id: string;
  status: string;
  tool: string;
  card: Card;
  error?: string | null;
}

/** The open question of a session (`GET /sessions/<id>` → `question`), as the one-shot uses it. */
export type OpenQuestion = Pick<Question, "id" | "text" | "options">;

/**
 * What `opencomputer session "text"` needs from a runtime. Two implementations: the embedded
 * runtime in this process, and a running server over HTTP (OPENCOMPUTER_API_URL), so the
 * one-shot behaves the same against both.
 */
export interface OneShotBackend {
  /** Where the session runs, for messages: "embedded" or the server's URL. */
  readonly where: string;
  createSession(agentRef: string): Promise<string>;
  sendTurn(sessionId: string, input: AgentInput): Promise<string>;
  /** Events after `after`; waits (up to ~1 s) for new ones when there are none yet. */
  nextEvents(sessionId: string, after: number): Promise<SessionEvent[]>;
  session(
    sessionId: string,
  ): Promise<{ question: OpenQuestion | null; result: unknown; status: SessionStatus }>;
  approvals(sessionId: string): Promise<ApprovalCard[]>;
  decide(approvalId: string, decision: "approve" | "deny"): Promise<ApprovalCard>;
  close(): Promise<void>;
}
