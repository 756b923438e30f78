import type { SessionParent } from "@opencomputer/protocol";
import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import type { SessionRecord } from "../ports/records.ts";
import { StoreError } from "../ports/store-errors.ts";
import { NotFoundError } from "./api-errors.ts";
import { endSession, interruptTurns } from "./cancellation.ts";
import { recordComputer } from "./computer-record.ts";
import { type EngineContext, write } from "./context.ts";
import { recordEgressEvent } from "./egress-events.ts";
import { admitBindings, bindingViews, parseMemoryOption } from "./memory-bindings.ts";
import { ProjectMemo } from "./project-of.ts";
import { closeQuestion } from "./question-input.ts";
import type { SessionActors } from "./runtime-actors.ts";
import type {
  CreateSessionResult,
  ResultPage,
  ResultsOptions,
  SessionsApi,
} from "./runtime-api.ts";
import { sendTurnNow } from "./send-turn.ts";
import { listSessions } from "./session-list.ts";
import {
  applyLabelChange,
  type CreateSessionOptions,
  validateCreateOptions,
} from "./session-options.ts";
import type { SessionWatchers } from "./session-watch.ts";
import { subagentKey } from "./subagent-host.ts";
import { toSessionView } from "./view.ts";
import { type WaitOptions, waitForTurn } from "./wait.ts";

export interface SessionsDeps {
  sessionActors: SessionActors;
  /** Fed by this process's commits, and by a shared signal's. */
  watchers: SessionWatchers;
  waitOptions: WaitOptions;
  /** Whether the runtime's signal is shared (sees other processes' commits). */
  watchesAllProcesses: boolean;
}

/** The runtime's `sessions`: each method checks its input and hands the work to an engine unit. */
export function createSessionsApi(ctx: EngineContext, deps: SessionsDeps): SessionsApi {
  const { store } = ctx;
  const { sessionActors, watchers, waitOptions } = deps;
  const { actors, kick } = sessionActors;
  const mustGetSession = (sessionId: string) => getSession(ctx, sessionId);
  const serial = serialPerSession();
  const startNew = sessionActors.startNew;
  const sendDeps = { ctx, actors, kick, startNew };
  const projects = new ProjectMemo(mustGetSession);

  const sessions: SessionsApi = {
    create: (raw) => createSession(ctx, projects, raw),
    list: (opts = {}) => listSessions(store, opts),
    projectOf: (sessionId) => projects.of(sessionId),
    async get(sessionId) {
      const [session, turns, creation] = await Promise.all([
        mustGetSession(sessionId),
        store.listTurns(sessionId),
        ctx.creations.of(store, sessionId),
      ]);
      const memory = await bindingViews(ctx.memory, session.id, session.status);
      return toSessionView(session, turns, memory, creation);
    },
    sendTurn: (sessionId, rawInput, opts = {}) =>
      serial(sessionId, () => sendTurnNow(sendDeps, sessionId, rawInput, opts)),
    interrupt: (sessionId) => interruptSession(ctx, sessionActors, sessionId),
    updateLabels(sessionId, change) {
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
    async end(sessionId) {
      await mustGetSession(sessionId);
      // Memory writes are revoked first: no save through this session commits after `end`.
      await ctx.memory?.revokeSession(sessionId);
      await endSession(ctx, actors, sessionId);
    },
    async events(sessionId, after = 0, limit = 500) {
      await mustGetSession(sessionId);
      return store.readEvents(sessionId, after, Math.min(Math.max(1, limit), 500));
    },
    results: (sessionId, opts = {}) => listResults(ctx, sessionId, opts),
    async result(sessionId, resultId) {
      const record = await store.getResult(sessionId, resultId);
      if (!record) throw new NotFoundError("result", resultId);
      return record;
    },
    waitForTurn: (sessionId, turnId, opts = {}) =>
      waitForTurn(ctx, sessionId, turnId, opts.timeoutMs ?? 60_000, waitOptions),
    recordComputer: (sessionId, change) => recordComputer(ctx, sessionId, change),
    recordEgress: (sessionId, event) => recordEgressEvent(ctx, sessionId, event),
    subscribe: (sessionId, listener) => ctx.notifier.subscribe(sessionId, listener),
    watch: (sessionId, listener) => watchers.watch(sessionId, listener),
    watchesAllProcesses: deps.watchesAllProcesses,
  };
  ctx.subagents = {
    async create(parentSession, agentId, id, parent) {
      const options = {
        agentId,
        projectId: parentSession.projectId,
        environment: parentSession.environment,
        source: parentSession.source,
        executionMode: parentSession.executionMode,
        idempotencyKey: subagentKey(parent.sessionId, parent.callId),
      };
      await createSession(ctx, projects, options, { id, parent });
    },
    send: (id, input, key) => sessions.sendTurn(id, input, { idempotencyKey: key }),
    cancel: (id, ended) => (ended ? sessions.end(id) : sessions.interrupt(id).then(() => {})),
    watch: (id, listener) => watchers.watch(id, () => listener()),
    pollMs: waitOptions.pollMs,
    deadlines: waitOptions.deadlines,
  };
  return sessions;
}

async function getSession(ctx: EngineContext, sessionId: string): Promise<SessionRecord> {
  const session = await ctx.store.getSession(sessionId);
  if (!session) throw new NotFoundError("session", sessionId);
  return session;
}

/**
 * Inputs of one session are taken one at a time: what a new input means (queued, held for an
 * open question, an answer) depends on what the previous one wrote.
 */
function serialPerSession(): <T>(sessionId: string, fn: () => Promise<T>) => Promise<T> {
  const sendQueues = new Map<string, Promise<unknown>>();
  return function serial<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
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
  };
}

/**
 * Creates a session (or finds the one its idempotency key made). `link` is the engine's own:
 * a subagent's session, its id derived from the delegating call, and the parent it records.
 */
export async function createSession(
  ctx: EngineContext,
  projects: ProjectMemo,
  raw: CreateSessionOptions,
  link?: { id: string; parent: SessionParent },
): Promise<CreateSessionResult> {
  const opts = validateCreateOptions(raw);
  const requested = parseMemoryOption(raw.memory);
  const { agentId, deploymentId } = await ctx.agents.describe(opts.agentId);
  const now = isoNow();
  const id = link?.id ?? newId("ses");
  // Bound before the session exists, so no session is ever seen without its bindings.
  if (requested.length > 0) {
    await admitBindings(
      ctx,
      { sessionId: id, projectId: opts.projectId, environment: opts.environment },
      { agentId, deploymentId },
      requested,
    );
  }
  const hasData = Object.keys(opts.data).length > 0;
  const { session, created } = await ctx.store.createSession(
    {
      id,
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
    [
      {
        type: "session.created",
        data: {
          agentId,
          deploymentId,
          ...(hasData ? { data: opts.data } : {}),
          ...(link ? { parent: link.parent } : {}),
          ...(opts.budget ? { budget: opts.budget } : {}),
        },
      },
    ],
  );
  projects.remember(session.id, session.projectId);
  const memory =
    requested.length > 0 || !created
      ? await bindingViews(ctx.memory, session.id, session.status)
      : [];
  if (created) {
    const creation = {
      data: opts.data,
      parent: link?.parent ?? null,
      ...(opts.budget ? { budget: opts.budget } : {}),
    };
    ctx.creations.remember(session.id, creation);
    return { session: toSessionView(session, [], memory, creation), created };
  }
  // A replayed session may have turns, and keeps what it was first created with.
  const [turns, creation] = await Promise.all([
    ctx.store.listTurns(session.id),
    ctx.creations.of(ctx.store, session.id),
  ]);
  return { session: toSessionView(session, turns, memory, creation), created };
}

async function interruptSession(
  ctx: EngineContext,
  sessionActors: SessionActors,
  sessionId: string,
): Promise<{ interruptedTurnIds: string[] }> {
  await getSession(ctx, sessionId);
  const running = (await ctx.store.listActiveTurns(sessionId)).filter(
    (t) => t.status === "running",
  );
  const interrupted = await interruptTurns(ctx, sessionActors.actors, sessionId, running);
  // An open question is closed too: the person no longer owes the agent an answer.
  const session = await getSession(ctx, sessionId);
  const close = closeQuestion(session, "interrupted");
  if (close.ops.length > 0) {
    await write(ctx, sessionId, {
      expectSession: { status: [session.status] },
      ...close,
    }).catch((error) => {
      if (!(error instanceof StoreError)) throw error;
    });
  }
  sessionActors.kick(sessionId);
  return { interruptedTurnIds: interrupted };
}

async function listResults(
  ctx: EngineContext,
  sessionId: string,
  opts: ResultsOptions,
): Promise<ResultPage> {
  await getSession(ctx, sessionId);
  const limit = Math.min(Math.max(1, opts.limit ?? 50), 200);
  const rows = await ctx.store.listResults(sessionId, {
    limit: limit + 1,
    ...(opts.turnId ? { turnId: opts.turnId } : {}),
    ...(opts.cursor ? { after: opts.cursor } : {}),
  });
  const page = rows.slice(0, limit);
  return {
    results: page,
    nextCursor: rows.length > limit ? (page[page.length - 1]?.resultId ?? null) : null,
  };
}
