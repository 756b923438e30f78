import type { ScheduleInput, WebhookInput } from "@opencomputer/protocol";
import type { AgentExecution } from "../ports/agent-execution.ts";
import type {
  ApprovalRecord,
  EventRecord,
  ResultRecord,
  TurnMode,
  TurnRecord,
} from "../ports/records.ts";
import type { ComputerChange } from "./computer-record.ts";
import type { EgressEventInput } from "./egress-events.ts";
import type { MemoryApi } from "./memory-api.ts";
import type { ListSessionsOptions, SessionListRow } from "./session-list.ts";
import type { CreateSessionOptions } from "./session-options.ts";
import type { SessionView } from "./view.ts";

// What `createRuntime` returns. Errors are `OpenComputerError`s with a `code` (docs/api.md):
// `not_found` (NotFoundError, HTTP 404), `invalid_input` (InputError, 400), a conflict
// (ConflictError, 409), `timeout`; a write the store refused is a StoreError (store-errors.ts).

/** The session engine: runs agents' turns durably on a Store. */
export interface Runtime {
  /** This runtime's id, written into the leases it holds. */
  readonly runtimeId: string;
  /** Where this runtime runs agent code (in-process or worker processes). */
  readonly execution: AgentExecution;
  readonly sessions: SessionsApi;
  /** Approvals proposed by tools with `preview`/`apply`: list, decide, retry, dismiss. */
  readonly approvals: ApprovalsApi;
  /** The owner's memory documents; absent when the runtime has no memory store. */
  readonly memory?: MemoryApi;
  /** Picks up sessions left by runtimes that died, now and every `recoveryIntervalMs`. */
  start(): Promise<void>;
  /**
   * Stops taking work and releases leases. A turn still running is left `running` in the store:
   * the next runtime to start on it re-queues and resumes it, as after a crash.
   */
  close(): Promise<void>;
}

export interface SendTurnOptions {
  mode?: TurnMode;
  idempotencyKey?: string;
  /**
   * Provenance a trigger attests (schedules, webhooks): set as `input.schedule` / `input.webhook`
   * with the matching `source`. Never taken from a client's input, so it cannot be forged.
   */
  origin?: { schedule: ScheduleInput } | { webhook: WebhookInput };
}

export interface SendTurnResult {
  /** The turn; for an input held while a question is open, the id of the held input. */
  turnId: string;
  /** `held`: a question is open; the input arrives with the answer as `steering`. */
  status: "queued" | "running" | "held";
  duplicate: boolean;
}

export interface CreateSessionResult {
  session: SessionView;
  /** False when the idempotency key was already used in the project: the existing session. */
  created: boolean;
}

export interface SessionPage {
  sessions: SessionListRow[];
  nextCursor: string | null;
}

export interface ResultsOptions {
  turnId?: string;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** 1..200, default 50. */
  limit?: number;
}

export interface ResultPage {
  results: ResultRecord[];
  nextCursor: string | null;
}

export interface LabelChange {
  set?: Record<string, string>;
  unset?: string[];
}

export interface WaitForTurnOptions {
  /** Default 60 000. */
  timeoutMs?: number;
}

/** Sessions and their turns. Every method taking a session id throws `not_found` if unknown. */
export interface SessionsApi {
  /**
   * Creates a session for `<agentId>@<alias>`: `invalid_input` for bad options, `invalid_agent` /
   * `agent_not_found` from the agent resolver. An idempotency key already used in the project
   * returns that session with `created: false`.
   */
  create(raw: CreateSessionOptions): Promise<CreateSessionResult>;

  /** Newest first; `nextCursor` continues the listing (see ListSessionsOptions); `invalid_input`. */
  list(opts?: ListSessionsOptions): Promise<SessionPage>;

  /** The project a session belongs to (`not_found` for an unknown session). */
  projectOf(sessionId: string): Promise<string>;

  /** The session with its turns. */
  get(sessionId: string): Promise<SessionView>;

  /**
   * Takes one input (queued, steered, interrupting, an answer, or held while a question is
   * open); inputs of one session are taken one at a time. `invalid_input` for a bad input, mode
   * or idempotency key; `session_ended` (conflict) for an ended session. A used idempotency key
   * returns the earlier turn with `duplicate: true`.
   */
  sendTurn(sessionId: string, rawInput: unknown, opts?: SendTurnOptions): Promise<SendTurnResult>;

  /** Cancels the running turn (`interrupted`); the next queued turn starts. No-op when idle. */
  interrupt(sessionId: string): Promise<{ interruptedTurnIds: string[] }>;

  /**
   * `PATCH /sessions/<id>/labels`: sets and removes labels in one write (revision grows).
   * The result must keep the label limits (`invalid_input`); labels are never shown to the agent.
   */
  updateLabels(sessionId: string, change: LabelChange): Promise<SessionView>;

  /** Cancels queued and running turns and ends the session; ending twice is a no-op. */
  end(sessionId: string): Promise<void>;

  /** Events after seq `after` (default 0), at most `limit` (1..500, default 500). */
  events(sessionId: string, after?: number, limit?: number): Promise<EventRecord[]>;

  /** The session's results (optionally one turn's), a page at a time. */
  results(sessionId: string, opts?: ResultsOptions): Promise<ResultPage>;

  /** One result; `not_found` (path `result`) when the session has no such result. */
  result(sessionId: string, resultId: string): Promise<ResultRecord>;

  /**
   * Resolves with the turn once it has settled (completed, failed or cancelled); `not_found`
   * (path `turn`) for an unknown turn, `timeout` when it has not settled within `timeoutMs`.
   */
  waitForTurn(sessionId: string, turnId: string, opts?: WaitForTurnOptions): Promise<TurnRecord>;

  /** Records a change of the session's computer (from a computer provider's lifecycle). */
  recordComputer(sessionId: string, change: ComputerChange): Promise<void>;

  /** Appends an egress event from the egress gateway to the session's log; `invalid_input`. */
  recordEgress(sessionId: string, event: EgressEventInput): Promise<void>;

  /** Calls `listener` with every event committed by this process for the session. */
  subscribe(sessionId: string, listener: (events: readonly EventRecord[]) => void): () => void;

  /**
   * Calls `listener` when the session has new events: with the last seq, or `null` when the
   * signal may have missed some (read again). Sees other processes' commits when the
   * runtime's signal is `shared`; readers then need no poll (see `watchesAllProcesses`).
   */
  watch(sessionId: string, listener: (lastSeq: number | null) => void): () => void;

  /** Whether `watch` also sees commits made by other processes on the store. */
  readonly watchesAllProcesses: boolean;
}

/** A person's decision on an approval, as the API receives it (checked by `decide`). */
export interface ApprovalDecisionInput {
  /** `"approve"` or `"deny"`. */
  decision: unknown;
  /** Who decided: a string of at most 200 characters. */
  decidedBy?: unknown;
}

/**
 * Approvals after the model proposed them. Every method taking an approval id throws
 * `not_found` (path `approval`) if unknown.
 */
export interface ApprovalsApi {
  get(id: string): Promise<ApprovalRecord>;

  /** The session's approvals. */
  list(sessionId: string): Promise<ApprovalRecord[]>;

  /**
   * A person's decision: once per approval (`approval_decided`, conflict, after that);
   * `invalid_input` for a bad body. Approving applies, and returns the approval after `apply`.
   */
  decide(id: string, body: ApprovalDecisionInput): Promise<ApprovalRecord>;

  /**
   * Runs an unconfirmed apply again, on a person's request, with the same `decision.id`;
   * `approval_state` (conflict) when the approval is not `unconfirmed`.
   */
  retry(id: string): Promise<ApprovalRecord>;

  /**
   * Accepts an unconfirmed outcome as it is; nothing runs again. `approval_state` (conflict) when
   * the approval is not `unconfirmed`.
   */
  dismiss(id: string): Promise<ApprovalRecord>;
}
