import type { NewEvent } from "@opencomputer/protocol";
import type {
  ApprovalRecord,
  ApprovalStatus,
  EventRecord,
  Lease,
  MessageRecord,
  ResultRecord,
  SessionRecord,
  SessionStatus,
  ToolCallRecord,
  TurnRecord,
  TurnStatus,
} from "./records.ts";

/** An event to append: the store adds seq, id and timestamp. Typed by the protocol. */
export type { NewEvent };

export type SessionPatch = Partial<
  Pick<SessionRecord, "status" | "result" | "question" | "runtime" | "labels">
>;
export type TurnPatch = Partial<
  Pick<
    TurnRecord,
    "status" | "outcome" | "error" | "steps" | "startedAt" | "settledAt" | "input" | "mode"
  >
>;

export type WriteOp =
  | { type: "session.update"; patch: SessionPatch }
  | { type: "turn.insert"; turn: TurnRecord }
  | { type: "turn.update"; id: string; patch: TurnPatch }
  | { type: "message.insert"; message: MessageRecord }
  | { type: "toolCall.upsert"; call: ToolCallRecord }
  | { type: "result.insert"; record: ResultRecord }
  | { type: "approval.insert"; approval: ApprovalRecord }
  /** Refused (`approval_state`) unless the approval's status is one of `expect`. */
  | {
      type: "approval.update";
      id: string;
      expect: readonly ApprovalStatus[];
      patch: ApprovalPatch;
    };

export type ApprovalPatch = Partial<
  Pick<
    ApprovalRecord,
    "status" | "decision" | "outcome" | "error" | "attempts" | "claimedBy" | "claimedAt"
  >
>;

export interface Fence {
  runtimeId: string;
  epoch: number;
}

export interface WriteBatch {
  /** When set, the batch is refused (`stale_epoch`) unless the session's lease has this runtime and epoch. */
  fence?: Fence;
  /** When set, refused (`turn_not_active`) unless the turn exists in the session with one of these statuses. */
  expectTurn?: { id: string; status: readonly TurnStatus[] };
  /** When set, refused (`session_state`) unless the session's status is one of these. */
  expectSession?: { status: readonly SessionStatus[] };
  /**
   * When set, refused (`calls_changed`) unless the calls of this turn still `started` are exactly
   * these: how a turn is settled with a synthetic `tool.failed` for each open call and none for a
   * call that completed meanwhile.
   */
  expectOpenCalls?: { turnId: string; callIds: readonly string[] };
  ops: readonly WriteOp[];
  /** Appended in order with the next seqs of the session. */
  events: readonly NewEvent[];
}

export interface SessionFilter {
  /** Only this project's sessions (unset: every project's, for the runtime's own use). */
  projectId?: string;
  agentId?: string;
  status?: SessionStatus;
  labels?: Record<string, string>;
  /**
   * Only sessions waiting for a person: an open question, or an approval that is `pending` or
   * `unconfirmed` (a retry or dismiss is theirs to decide).
   */
  waiting?: boolean;
  /** Rows strictly after this position in (createdAt desc, id desc) order. */
  cursor?: { createdAt: string; id: string };
  limit: number;
}

export interface ResultFilter {
  turnId?: string;
  /** Rows strictly after this resultId in insertion order. */
  after?: string;
  limit: number;
}

export interface Store {
  /**
   * Creates a session and appends `events` (the first must be `session.created`). With an
   * idempotency key already used in the same project, returns the existing session and
   * `created: false` (keys are scoped per project so one project cannot see another's). Only
   * creation events belong here: a store may refuse (`invalid_batch`) events that bring rows of
   * their own (`usage.recorded`, a turn's terminal event), which are appended with `apply`.
   */
  createSession(
    session: SessionRecord,
    events: readonly NewEvent[],
  ): Promise<{ session: SessionRecord; created: boolean }>;

  /** Applies the batch atomically and returns the appended events with their seqs. */
  apply(sessionId: string, batch: WriteBatch): Promise<EventRecord[]>;

  /**
   * Takes the session's lease when it is free, expired or already held by `runtimeId`
   * (then it is extended, same epoch). A change of holder increments the epoch.
   * Returns null when another runtime holds a live lease.
   */
  acquireLease(
    sessionId: string,
    runtimeId: string,
    ttlMs: number,
    now?: number,
  ): Promise<Lease | null>;
  /**
   * `acquireLease` and `apply` in one transaction: takes or extends the lease for `runtimeId`,
   * then applies the batch fenced by it. Null (nothing written) when another runtime holds a
   * live lease. This is how a runtime's first write for a turn also claims the session.
   */
  applyWithLease(
    sessionId: string,
    runtimeId: string,
    ttlMs: number,
    batch: WriteBatch,
  ): Promise<{ lease: Lease; events: EventRecord[] } | null>;
  /** Extends a lease still held with this epoch; null when it was lost. */
  renewLease(sessionId: string, lease: Lease, ttlMs: number, now?: number): Promise<Lease | null>;
  /**
   * Gives the lease up (expiresAt = 0, epoch kept) if it is still exactly this lease: same
   * holder and epoch, not extended since (so a late release cannot undo a newer acquire).
   */
  releaseLease(sessionId: string, lease: Lease): Promise<void>;

  getSession(sessionId: string): Promise<SessionRecord | undefined>;
  listSessions(filter: SessionFilter): Promise<SessionRecord[]>;
  /** Every turn of the session, in insertion order. */
  listTurns(sessionId: string): Promise<TurnRecord[]>;
  /**
   * The session's queued and running turns, in insertion order: what the engine looks at before
   * and after every turn, read without the settled ones, which grow with the session.
   */
  listActiveTurns(sessionId: string): Promise<TurnRecord[]>;
  /**
   * `getSession` and `listActiveTurns` in one read (one statement on PostgreSQL, so one round
   * trip and one snapshot): what taking a new input looks at. Undefined when there is no session.
   */
  getSessionWithActiveTurns(
    sessionId: string,
  ): Promise<{ session: SessionRecord; activeTurns: TurnRecord[] } | undefined>;
  /**
   * The turn that settled last (latest `settledAt`, then the later inserted), not counting
   * turns whose outcome is `steered` (folded into another turn): what a session list shows.
   */
  lastSettledTurn(sessionId: string): Promise<TurnRecord | undefined>;
  /** The session's first turn (insertion order): what a session list shows as its opening message. */
  firstTurn(sessionId: string): Promise<TurnRecord | undefined>;
  getTurn(sessionId: string, turnId: string): Promise<TurnRecord | undefined>;
  findTurnByIdempotencyKey(sessionId: string, key: string): Promise<TurnRecord | undefined>;
  /** In insertion order. */
  listMessages(sessionId: string): Promise<MessageRecord[]>;
  /** In insertion order (first start). */
  listToolCalls(sessionId: string, turnId?: string): Promise<ToolCallRecord[]>;
  getToolCall(sessionId: string, callId: string): Promise<ToolCallRecord | undefined>;
  /** Oldest first. */
  listResults(sessionId: string, filter: ResultFilter): Promise<ResultRecord[]>;
  getResult(sessionId: string, resultId: string): Promise<ResultRecord | undefined>;
  getResultByCall(sessionId: string, toolCallId: string): Promise<ResultRecord | undefined>;
  /** At most `limit` events with seq > after, ascending. */
  readEvents(sessionId: string, after: number, limit: number): Promise<EventRecord[]>;
  /**
   * Sessions that have a queued or running turn and whose lease is free or expired at
   * `now`: the work a starting runtime must pick up.
   */
  listRecoverableSessions(now?: number): Promise<string[]>;
  /**
   * The distinct holders of leases still live at `now` on sessions with a queued or running
   * turn: whom a starting runtime asks whether they are alive (docs/architecture.md, leases).
   */
  listLeaseHolders(now?: number): Promise<string[]>;
  /**
   * Ends at once (expiresAt = 0, epoch kept) every lease `runtimeId` holds, for a holder known
   * to be dead: the sessions become recoverable, the next acquire bumps the epoch and fencing
   * refuses anything the dead holder left in flight. Only rows whose holder is still exactly
   * `runtimeId` change. Returns those sessions' ids.
   */
  expireLeasesOf(runtimeId: string): Promise<string[]>;

  getApproval(approvalId: string): Promise<ApprovalRecord | undefined>;
  /** A session's approvals, oldest first. */
  listApprovals(sessionId: string): Promise<ApprovalRecord[]>;
  /** Approvals in these statuses across sessions, oldest first (for recovery). */
  listApprovalsByStatus(
    statuses: readonly ApprovalStatus[],
    limit: number,
  ): Promise<ApprovalRecord[]>;

  close(): Promise<void>;
}
