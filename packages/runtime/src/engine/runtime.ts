import { createInProcessExecution } from "../agents/in-process.ts";
import { locatedAgents } from "../agents/located.ts";
import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import type { AgentExecution } from "../ports/agent-execution.ts";
import type { AgentResolver } from "../ports/agent-resolver.ts";
import type { BuiltInTool } from "../ports/built-in-tool.ts";
import type { ModelResolver } from "../ports/model.ts";
import { MODEL_PROVIDED_TOOL_IDS } from "../ports/provider-tools.ts";
import type {
  EventRecord,
  ResultRecord,
  SessionRecord,
  SessionSource,
  TurnRecord,
} from "../ports/records.ts";
import type { NewEvent, Store } from "../ports/store.ts";
import { StoreError } from "../ports/store-errors.ts";
import type { SessionSignal, WorkSignal } from "../ports/work-signal.ts";
import { NotFoundError } from "./api-errors.ts";
import { createApprovals } from "./approvals.ts";
import { ASK_ID } from "./ask.ts";
import { endSession, interruptTurns } from "./cancellation.ts";
import { type ComputerChange, recordComputer } from "./computer-record.ts";
import { type EgressSource, type EngineContext, type Logger, write } from "./context.ts";
import { Deadlines } from "./deadlines.ts";
import { type EgressEventInput, recordEgressEvent } from "./egress-events.ts";
import { Notifier } from "./notifier.ts";
import { ProjectMemo } from "./project-of.ts";
import { closeQuestion } from "./question-input.ts";
import type { Runtime, SendTurnOptions, SendTurnResult, SessionsApi } from "./runtime-api.ts";
import { sendTurnNow } from "./send-turn.ts";
import { SessionActor } from "./session-actor.ts";
import { type ListSessionsOptions, listSessions } from "./session-list.ts";
import {
  applyLabelChange,
  type CreateSessionOptions,
  validateCreateOptions,
} from "./session-options.ts";
import { SessionWatchers } from "./session-watch.ts";
import { type SessionView, toSessionView } from "./view.ts";
import { waitForTurn } from "./wait.ts";
import { WorkerLosses } from "./worker-loss.ts";

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
  /**
   * How often `waitForTurn` reads the turn again whatever it heard: 250 ms by default, 5 s with
   * a shared signal (which wakes it at the settling commit of any process).
   */
  waitPollMs?: number;
  /** How long an idle session's lease is kept before it is given up (default 1000). */
  idleReleaseMs?: number;
  /** How long an approved `apply` may run before its outcome counts as unknown (default 60 000). */
  applyTimeoutMs?: number;
  /** Runtime-provided tools agents may select by id, e.g. the computers' `shell`. */
  builtInTools?: BuiltInTool[];
  /**
   * How this process hears of commits made by others on the same store (new work, new events).
   * Default: the in-process Notifier, which only sees this process's own writes. Several
   * processes on PostgreSQL pass `createPostgresSignal` (LISTEN/NOTIFY). The caller closes it.
   */
  signal?: WorkSignal;
  /**
   * How long a process that did not queue a turn waits before trying to claim it, so the
   * process that queued it (and whose client waits there) normally runs it (default 100).
   */
  remoteClaimDelayMs?: number;
  /**
   * Where agent code runs: "in-process" (default), or an AgentExecution the caller made and
   * closes, e.g. worker processes (`createWorkerExecution` from @opencomputer/workers,
   * docs/workers.md).
   */
  execution?: ExecutionOption;
  /** The egress gateway URL and per-session token sent with every execution of agent code. */
  egress?: EgressSource;
}

/** Where agent code runs: in this process, or through an execution the caller owns. */
export type ExecutionOption = "in-process" | AgentExecution;

/** The execution to use, the resolver the engine loads through, and whether the runtime owns it. */
function resolveExecution(
  option: ExecutionOption | undefined,
  agents: AgentResolver,
): { execution: AgentExecution; agents: AgentResolver; owned: boolean } {
  if (option === undefined || option === "in-process") {
    return { execution: createInProcessExecution(agents), agents, owned: true };
  }
  // Agent code runs elsewhere: the engine must not import it, only locate it.
  return {
    execution: option,
    agents: option.kind === "worker" ? locatedAgents(agents) : agents,
    owned: false,
  };
}

const consoleLog: Logger = {
  error: (message, fields) => console.error(JSON.stringify({ level: "error", message, ...fields })),
  warn: (message, fields) => console.error(JSON.stringify({ level: "warn", message, ...fields })),
};

/** The session engine: runs agents' turns durably on a Store. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const leaseMs = options.leaseMs ?? 30_000;
  const log = options.log ?? consoleLog;
  const running = resolveExecution(options.execution, options.agents);
  const ctx: EngineContext = {
    store: options.store,
    agents: running.agents,
    execution: running.execution,
    ...(options.egress ? { egress: options.egress } : {}),
    models: options.models,
    notifier: new Notifier(),
    log,
    runtimeId: options.runtimeId ?? newId("rt"),
    leaseMs,
    maxSteps: options.maxSteps ?? 50,
    cancelGraceMs: options.cancelGraceMs ?? 2000,
    builtInToolIds: [
      ASK_ID,
      ...MODEL_PROVIDED_TOOL_IDS,
      ...(options.builtInTools ?? []).map((t) => t.id),
    ],
    builtInTools: new Map((options.builtInTools ?? []).map((t) => [t.id, t])),
    workerLosses: new WorkerLosses(),
    timers: new Deadlines<() => void>((run) => run(), { keepAlive: false }),
  };
  const { store } = ctx;
  const actors = new Map<string, SessionActor>();
  let recoveryTimer: NodeJS.Timeout | null = null;
  let closed = false;

  const idleReleaseMs = options.idleReleaseMs ?? 1000;
  const signal = options.signal ?? ctx.notifier;
  const watchers = new SessionWatchers();
  // Fed by the shared signal only: what other processes commit (and this one's, repeated).
  const remoteWatchers = signal !== ctx.notifier && signal.shared ? new SessionWatchers() : null;
  const waitOptions = {
    pollMs: options.waitPollMs ?? (remoteWatchers ? 5_000 : 250),
    // Unlike the runtime's own timers, a wait keeps the process alive, as its promise is owed.
    deadlines: new Deadlines<() => void>((run) => run(), { keepAlive: true }),
    ...(remoteWatchers
      ? {
          watchRemote: (id: string, listener: (lastSeq: number | null) => void) =>
            remoteWatchers.watch(id, listener),
        }
      : {}),
  };
  const idleReleases = new Map<string, () => void>();

  function actor(sessionId: string): SessionActor {
    const pending = idleReleases.get(sessionId);
    if (pending) {
      ctx.timers.delete(pending);
      idleReleases.delete(sessionId);
    }
    let w = actors.get(sessionId);
    if (!w) {
      // An idle actor drops its conversation cache at once, and gives its lease up after
      // `idleReleaseMs`: soon enough that another runtime can take the session's next turn,
      // late enough that a conversation's next turn here needs no new claim.
      w = new SessionActor(ctx, sessionId, (idle) => {
        idle.forgetConversation();
        const release = () => {
          idleReleases.delete(sessionId);
          if (!idle.idle || actors.get(sessionId) !== idle) return;
          actors.delete(sessionId);
          void idle.release();
        };
        idleReleases.set(sessionId, release);
        ctx.timers.set(release, Date.now() + idleReleaseMs);
      });
      actors.set(sessionId, w);
    }
    return w;
  }

  function kick(sessionId: string, session?: SessionRecord): void {
    if (closed) return;
    void actor(sessionId).kick(session);
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

  // Dispatch across processes. Every process that hears "session S has new work" looks at it;
  // the lease claim in the turn-start write lets exactly one of them run the turn, and the
  // others back off (SessionActor.loop reads the live lease first). After a resync (the signal
  // may have missed notifications) everything is looked at again once.
  //
  // A process with an actor for the session (it holds or just held the lease) looks at once.
  // The others wait `remoteClaimDelayMs` first: the process that queued the turn has already
  // kicked its own actor, and letting it claim keeps the turn where its client waits, instead
  // of every process racing for every new turn.
  const deferred = new Map<string, NodeJS.Timeout>();
  const remoteClaimDelayMs = options.remoteClaimDelayMs ?? 100;
  function dispatch(s: SessionSignal): void {
    if (closed) return;
    if (s.kind === "commit") {
      if (!s.work) return;
      if (actors.has(s.sessionId)) kick(s.sessionId);
      else if (!deferred.has(s.sessionId)) {
        const timer = setTimeout(() => {
          deferred.delete(s.sessionId);
          kick(s.sessionId);
        }, remoteClaimDelayMs);
        timer.unref();
        deferred.set(s.sessionId, timer);
      }
      return;
    }
    for (const sessionId of actors.keys()) kick(sessionId);
    void recover().catch((e) => ctx.log.error("recovery failed", { error: String(e) }));
  }
  // Local commits wake this process's readers at once; a shared signal adds everyone else's
  // (this process's own commits come back through it too: a spare wake-up, never a gap).
  const unlisten = [ctx.notifier.listen((s) => watchers.deliver(s))];
  if (signal !== ctx.notifier) {
    unlisten.push(
      signal.listen((s) => {
        watchers.deliver(s);
        remoteWatchers?.deliver(s);
        dispatch(s);
      }),
    );
  }

  // Inputs of one session are taken one at a time: what a new input means (queued, held for an
  // open question, an answer) depends on what the previous one wrote.
  const sendQueues = new Map<string, Promise<unknown>>();
  function serial<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const previous = sendQueues.get(sessionId);
    // Nothing queued: start at once rather than a microtask later (fn is async, so it still
    // returns before its first await and the entry below is set before anything can queue).
    const next = previous === undefined ? fn() : previous.then(fn, fn);
    const forget = () => {
      if (sendQueues.get(sessionId) === settled) sendQueues.delete(sessionId);
    };
    const settled: Promise<unknown> = next.then(forget, forget);
    sendQueues.set(sessionId, settled);
    return next;
  }

  function startNew(
    sessionId: string,
    session: SessionRecord,
    turn: TurnRecord,
    received: NewEvent[],
  ): Promise<boolean> {
    if (closed) return Promise.resolve(false);
    return actor(sessionId).startNew(session, turn, received);
  }

  const sendDeps = { ctx, actors, kick, startNew, mustGetSession };
  const projects = new ProjectMemo(mustGetSession);

  const sessions: SessionsApi = {
    async create(raw: CreateSessionOptions) {
      const opts = validateCreateOptions(raw);
      const { agentId, deploymentId } = await ctx.agents.describe(opts.agentId);
      const now = isoNow();
      const { session, created } = await store.createSession(
        {
          id: newId("ses"),
          projectId: opts.projectId,
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
      projects.remember(session.id, session.projectId);
      // A session just created has no turns; a replayed one may.
      const turns = created ? [] : await store.listTurns(session.id);
      return { session: toSessionView(session, turns), created };
    },

    /** Newest first; `nextCursor` continues the listing (see ListSessionsOptions). */
    list(opts: ListSessionsOptions = {}) {
      return listSessions(store, opts);
    },

    /** The project a session belongs to (`not_found` for an unknown session). */
    projectOf(sessionId: string): Promise<string> {
      return projects.of(sessionId);
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
      const running = (await store.listActiveTurns(sessionId)).filter(
        (t) => t.status === "running",
      );
      const interrupted = await interruptTurns(ctx, actors, sessionId, running);
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
      await endSession(ctx, actors, sessionId);
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
      return waitForTurn(ctx, sessionId, turnId, opts.timeoutMs ?? 60_000, waitOptions);
    },

    /** Records a change of the session's computer (from a computer provider's lifecycle). */
    recordComputer(sessionId: string, change: ComputerChange): Promise<void> {
      return recordComputer(ctx, sessionId, change);
    },

    /** Appends an egress event from the egress gateway to the session's log. */
    recordEgress(sessionId: string, event: EgressEventInput): Promise<void> {
      return recordEgressEvent(ctx, sessionId, event);
    },

    /** Calls `listener` with every event committed by this process for the session. */
    subscribe(sessionId: string, listener: (events: readonly EventRecord[]) => void): () => void {
      return ctx.notifier.subscribe(sessionId, listener);
    },

    /**
     * Calls `listener` when the session has new events: with the last seq, or `null` when the
     * signal may have missed some (read again). Sees other processes' commits when the
     * runtime's signal is `shared`; readers then need no poll (see `watchesAllProcesses`).
     */
    watch(sessionId: string, listener: (lastSeq: number | null) => void): () => void {
      return watchers.watch(sessionId, listener);
    },

    /** Whether `watch` also sees commits made by other processes on the store. */
    watchesAllProcesses: signal.shared,
  };

  return {
    runtimeId: ctx.runtimeId,
    /** Where this runtime runs agent code (in-process or worker processes). */
    execution: ctx.execution,
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
      for (const stop of unlisten) stop();
      for (const timer of deferred.values()) clearTimeout(timer);
      deferred.clear();
      if (recoveryTimer) clearInterval(recoveryTimer);
      ctx.timers.close();
      idleReleases.clear();
      for (const w of actors.values()) w.abandon();
      await Promise.all([...actors.values()].map((w) => w.kick().then(() => w.release())));
      if (running.owned) await running.execution.close();
    },
  };
}

export type { Runtime, SendTurnOptions, SendTurnResult, SessionSource };
