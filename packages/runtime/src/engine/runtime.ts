import type { AgentResolver } from "../agents/resolver.ts";
import { newId } from "../ids.ts";
import type { ModelResolver } from "../models/resolver.ts";
import { StoreError } from "../store/errors.ts";
import type { Store } from "../store/port.ts";
import type {
  EventRecord,
  ResultRecord,
  SessionSource,
  TurnMode,
  TurnRecord,
} from "../store/records.ts";
import { NotFoundError } from "./api-errors.ts";
import { createApprovals } from "./approvals.ts";
import { ASK_ID } from "./ask.ts";
import type { BuiltInTool } from "./built-in-tool.ts";
import { endSession, interruptTurns } from "./cancellation.ts";
import { type ComputerChange, recordComputer } from "./computer-record.ts";
import { type EngineContext, type Logger, write } from "./context.ts";
import { Notifier } from "./notifier.ts";
import { closeQuestion } from "./question-input.ts";
import { sendTurnNow } from "./send-turn.ts";
import { type ListSessionsOptions, listSessions } from "./session-list.ts";
import {
  applyLabelChange,
  type CreateSessionOptions,
  validateCreateOptions,
} from "./session-options.ts";
import { SessionWorker } from "./session-worker.ts";
import { type SessionView, toSessionView } from "./view.ts";
import { waitForTurn } from "./wait.ts";

export interface RuntimeOptions {
  store: Store;
  agents: AgentResolver;
  models: ModelResolver;
  runtimeId?: string;
  /** How long a session's lease lasts without renewal; another runtime takes over after it. */
  leaseMs?: number;
  /** Model steps one turn may take (default 50). */
  maxSteps?: number;
  /** How long an interrupt waits for tools to honour their signal before settling (default 2000). */
  cancelGraceMs?: number;
  /** How often to look for sessions whose runtime died (default leaseMs / 2). */
  recoveryIntervalMs?: number;
  log?: Logger;
  /** How long an idle session's lease is kept before it is given up (default 1000). */
  idleReleaseMs?: number;
  /** How long an approved `apply` may run before its outcome counts as unknown (default 60 000). */
  applyTimeoutMs?: number;
  /** Runtime-provided tools agents may select by id, e.g. the computers' `shell`. */
  builtInTools?: BuiltInTool[];
}

export interface SendTurnOptions {
  mode?: TurnMode;
  idempotencyKey?: string;
}

export interface SendTurnResult {
  /** The turn; for an input held while a question is open, the id of the held input. */
  turnId: string;
  /** `held`: a question is open; the input arrives with the answer as `steering`. */
  status: "queued" | "running" | "held";
  duplicate: boolean;
}

const consoleLog: Logger = {
  error: (message, fields) => console.error(JSON.stringify({ level: "error", message, ...fields })),
  warn: (message, fields) => console.error(JSON.stringify({ level: "warn", message, ...fields })),
};

export type Runtime = ReturnType<typeof createRuntime>;

/** The session engine: runs agents' turns durably on a Store. */
export function createRuntime(options: RuntimeOptions) {
  const leaseMs = options.leaseMs ?? 30_000;
  const ctx: EngineContext = {
    store: options.store,
    agents: options.agents,
    models: options.models,
    notifier: new Notifier(),
    log: options.log ?? consoleLog,
    runtimeId: options.runtimeId ?? newId("rt"),
    leaseMs,
    maxSteps: options.maxSteps ?? 50,
    cancelGraceMs: options.cancelGraceMs ?? 2000,
    builtInToolIds: [ASK_ID, ...(options.builtInTools ?? []).map((t) => t.id)],
    builtInTools: new Map((options.builtInTools ?? []).map((t) => [t.id, t])),
  };
  const { store } = ctx;
  const workers = new Map<string, SessionWorker>();
  let recoveryTimer: NodeJS.Timeout | null = null;
  let closed = false;

  const idleReleaseMs = options.idleReleaseMs ?? 1000;
  const idleTimers = new Map<string, NodeJS.Timeout>();

  function worker(sessionId: string): SessionWorker {
    const pending = idleTimers.get(sessionId);
    if (pending) {
      clearTimeout(pending);
      idleTimers.delete(sessionId);
    }
    let w = workers.get(sessionId);
    if (!w) {
      // An idle worker drops its conversation cache at once, and gives its lease up after
      // `idleReleaseMs`: soon enough that another runtime can take the session's next turn,
      // late enough that a conversation's next turn here needs no new claim.
      w = new SessionWorker(ctx, sessionId, (idle) => {
        idle.forgetConversation();
        const timer = setTimeout(() => {
          idleTimers.delete(sessionId);
          if (!idle.idle || workers.get(sessionId) !== idle) return;
          workers.delete(sessionId);
          void idle.release();
        }, idleReleaseMs);
        timer.unref();
        idleTimers.set(sessionId, timer);
      });
      workers.set(sessionId, w);
    }
    return w;
  }

  function kick(sessionId: string): void {
    if (closed) return;
    void worker(sessionId).kick();
  }

  async function mustGetSession(sessionId: string) {
    const session = await store.getSession(sessionId);
    if (!session) throw new NotFoundError("session", sessionId);
    return session;
  }

  const approvals = createApprovals(ctx, { applyTimeoutMs: options.applyTimeoutMs ?? 60_000 });

  async function recover(): Promise<void> {
    await approvals.recover();
    for (const sessionId of await store.listRecoverableSessions()) kick(sessionId);
  }

  // Inputs of one session are taken one at a time: what a new input means (queued, held for an
  // open question, an answer) depends on what the previous one wrote.
  const sendQueues = new Map<string, Promise<unknown>>();
  function serial<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const previous = sendQueues.get(sessionId) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const settled = next.catch(() => {});
    sendQueues.set(sessionId, settled);
    void settled.then(() => {
      if (sendQueues.get(sessionId) === settled) sendQueues.delete(sessionId);
    });
    return next;
  }

  const sendDeps = { ctx, workers, kick, mustGetSession };

  const sessions = {
    async create(raw: CreateSessionOptions) {
      const opts = validateCreateOptions(raw);
      const { agentId, deploymentId } = await ctx.agents.describe(opts.agentId);
      const now = new Date().toISOString();
      const { session, created } = await store.createSession(
        {
          id: newId("ses"),
          agentId,
          deploymentId,
          environment: opts.environment,
          status: "new",
          source: opts.source,
          labels: opts.labels,
          executionMode: opts.executionMode,
          result: null,
          question: null,
          runtime: { generation: 0, state: "none" },
          revision: 1,
          lastSeq: 0,
          idempotencyKey: opts.idempotencyKey ?? null,
          lease: null,
          createdAt: now,
          updatedAt: now,
        },
        [{ type: "session.created", data: { agentId, deploymentId } }],
      );
      // A session just created has no turns; a replayed one may.
      const turns = created ? [] : await store.listTurns(session.id);
      return { session: toSessionView(session, turns), created };
    },

    /** Newest first; `nextCursor` continues the listing (see ListSessionsOptions). */
    list(opts: ListSessionsOptions = {}) {
      return listSessions(store, opts);
    },

    async get(sessionId: string): Promise<SessionView> {
      const [session, turns] = await Promise.all([
        mustGetSession(sessionId),
        store.listTurns(sessionId),
      ]);
      return toSessionView(session, turns);
    },

    sendTurn(
      sessionId: string,
      rawInput: unknown,
      opts: SendTurnOptions = {},
    ): Promise<SendTurnResult> {
      return serial(sessionId, () => sendTurnNow(sendDeps, sessionId, rawInput, opts));
    },

    /** Cancels the running turn (`interrupted`); the next queued turn starts. No-op when idle. */
    async interrupt(sessionId: string): Promise<{ interruptedTurnIds: string[] }> {
      await mustGetSession(sessionId);
      const running = (await store.listTurns(sessionId)).filter((t) => t.status === "running");
      const interrupted = await interruptTurns(ctx, workers, sessionId, running);
      // An open question is closed too: the person no longer owes the agent an answer.
      const session = await mustGetSession(sessionId);
      const close = closeQuestion(session, "interrupted");
      if (close.ops.length > 0) {
        await write(ctx, sessionId, {
          expectSession: { status: [session.status] },
          ...close,
        }).catch((error) => {
          if (!(error instanceof StoreError)) throw error;
        });
      }
      kick(sessionId);
      return { interruptedTurnIds: interrupted };
    },

    /**
     * `PATCH /sessions/<id>/labels`: sets and removes labels in one write (revision grows).
     * The result must keep the label limits; labels are never shown to the agent.
     */
    updateLabels(sessionId: string, change: { set?: Record<string, string>; unset?: string[] }) {
      return serial(sessionId, async () => {
        const session = await mustGetSession(sessionId);
        const labels = applyLabelChange(session.labels, change);
        await write(ctx, sessionId, {
          ops: [{ type: "session.update", patch: { labels } }],
          events: [{ type: "session.labels_changed", data: { labels } }],
        });
        return sessions.get(sessionId);
      });
    },

    /** Cancels queued and running turns and ends the session; ending twice is a no-op. */
    async end(sessionId: string): Promise<void> {
      await mustGetSession(sessionId);
      await endSession(ctx, workers, sessionId);
    },

    async events(sessionId: string, after = 0, limit = 500): Promise<EventRecord[]> {
      await mustGetSession(sessionId);
      return store.readEvents(sessionId, after, Math.min(Math.max(1, limit), 500));
    },

    async results(
      sessionId: string,
      opts: { turnId?: string; cursor?: string; limit?: number } = {},
    ) {
      await mustGetSession(sessionId);
      const limit = Math.min(Math.max(1, opts.limit ?? 50), 200);
      const rows = await store.listResults(sessionId, {
        limit: limit + 1,
        ...(opts.turnId ? { turnId: opts.turnId } : {}),
        ...(opts.cursor ? { after: opts.cursor } : {}),
      });
      const page = rows.slice(0, limit);
      return {
        results: page,
        nextCursor: rows.length > limit ? (page[page.length - 1]?.resultId ?? null) : null,
      };
    },

    async result(sessionId: string, resultId: string): Promise<ResultRecord> {
      const record = await store.getResult(sessionId, resultId);
      if (!record) throw new NotFoundError("result", resultId);
      return record;
    },

    /** Resolves with the turn once it has settled (completed, failed or cancelled). */
    waitForTurn(
      sessionId: string,
      turnId: string,
      opts: { timeoutMs?: number } = {},
    ): Promise<TurnRecord> {
      return waitForTurn(ctx, sessionId, turnId, opts.timeoutMs ?? 60_000);
    },

    /** Records a change of the session's computer (from a computer provider's lifecycle). */
    recordComputer(sessionId: string, change: ComputerChange): Promise<void> {
      return recordComputer(ctx, sessionId, change);
    },

    /** Calls `listener` with every event committed by this process for the session. */
    subscribe(sessionId: string, listener: (events: readonly EventRecord[]) => void): () => void {
      return ctx.notifier.subscribe(sessionId, listener);
    },
  };

  return {
    runtimeId: ctx.runtimeId,
    sessions,
    /** Approvals proposed by tools with `preview`/`apply`: list, decide, retry, dismiss. */
    approvals,
    /** Picks up sessions left by runtimes that died, now and every `recoveryIntervalMs`. */
    async start(): Promise<void> {
      await recover();
      const every = options.recoveryIntervalMs ?? Math.max(50, Math.floor(leaseMs / 2));
      recoveryTimer = setInterval(
        () => void recover().catch((e) => ctx.log.error("recovery failed", { error: String(e) })),
        every,
      );
      recoveryTimer.unref();
    },
    /**
     * Stops taking work and releases leases. A turn still running is left `running` in the store:
     * the next runtime to start on it re-queues and resumes it, as after a crash.
     */
    async close(): Promise<void> {
      closed = true;
      if (recoveryTimer) clearInterval(recoveryTimer);
      for (const timer of idleTimers.values()) clearTimeout(timer);
      idleTimers.clear();
      for (const w of workers.values()) w.abandon();
      await Promise.all([...workers.values()].map((w) => w.kick().then(() => w.release())));
    },
  };
}

export type { SessionSource };
