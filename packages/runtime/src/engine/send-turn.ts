import type { AgentInput } from "@opencomputer/agent";
import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import type { SessionRecord, TurnRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { StoreError } from "../ports/store-errors.ts";
import { ConflictError, NotFoundError } from "./api-errors.ts";
import { interruptTurns } from "./cancellation.ts";
import { type EngineContext, write } from "./context.ts";
import { validateInput, validateMode, withOrigin } from "./input.ts";
import { answerKey, planQuestionInput } from "./question-input.ts";
import type { SendTurnOptions, SendTurnResult } from "./runtime.ts";
import type { SessionActors } from "./runtime-actors.ts";

/** What taking an input needs: the runtime's actors (to kick or start one). */
export interface SendTurnDeps extends Pick<SessionActors, "actors" | "kick" | "startNew"> {
  ctx: EngineContext;
}

/**
 * Takes one input for a session: validates it, decides what it means (a queued turn, a steer
 * into the running turn, an interrupt, an answer to the open question, or an input held until
 * that answer), writes it with its events, and wakes the session's actor.
 */
export async function sendTurnNow(
  deps: SendTurnDeps,
  sessionId: string,
  rawInput: unknown,
  opts: SendTurnOptions,
): Promise<SendTurnResult> {
  const { ctx, actors, startNew } = deps;
  const { store } = ctx;
  const input: AgentInput = withOrigin(validateInput(rawInput), opts.origin);
  const mode = validateMode(opts.mode);
  const key = checkedKey(opts.idempotencyKey);
  // The active turns are read with the session, not after it: usually needed (a turn that may
  // start, a steer), and one read is one round trip on PostgreSQL.
  const read = await store.getSessionWithActiveTurns(sessionId);
  if (!read) throw new NotFoundError("session", sessionId);
  const { session } = read;
  if (key) {
    const existing = await store.findTurnByIdempotencyKey(sessionId, key);
    if (existing) return duplicateOf(existing);
  }
  if (session.status === "ended") {
    throw new ConflictError(
      "session_ended",
      `Session ${sessionId} has ended; start a new session`,
      { path: "sessionId" },
    );
  }
  if (input.answer) {
    // An answer already taken (a double click, a retry) returns the turn it made.
    const taken = await store.findTurnByIdempotencyKey(
      sessionId,
      answerKey(input.answer.questionId),
    );
    if (taken) return duplicateOf(taken);
  }
  const plan = planQuestionInput(session, input);
  if (plan.kind === "held") {
    await write(ctx, sessionId, {
      expectSession: { status: [session.status] },
      ops: plan.ops,
      events: plan.events,
    });
    return { turnId: plan.heldId, status: "held", duplicate: false };
  }
  // A turn that can start at once (nothing ahead of it, no runtime busy with the session) is
  // inserted started, in one write with the lease claim; otherwise only steer and interrupt
  // depend on what is running, and a plain queue needs no read.
  const mayStart =
    plan.kind !== "answer" &&
    (session.status === "new" || session.status === "idle") &&
    actors.get(sessionId)?.idle !== false &&
    !heldElsewhere(session, ctx.runtimeId);
  const active = mayStart || mode !== "queue" ? read.activeTurns : [];
  const running = active.filter((t) => t.status === "running");
  const turn = queuedTurn(
    sessionId,
    plan.kind === "answer" ? plan.input : input,
    mode,
    key ?? (plan.kind === "answer" ? plan.idempotencyKey : null),
  );
  const events = receivedEvents(turn, input, mode, running);
  try {
    if (mayStart && active.length === 0 && (await startNew(sessionId, session, turn, events))) {
      return { turnId: turn.id, status: "running", duplicate: false };
    }
    await write(ctx, sessionId, {
      expectSession: { status: ["new", "idle", "running", "waiting_runtime", "failed"] },
      ops: [{ type: "turn.insert", turn }, ...(plan.kind === "answer" ? plan.ops : [])],
      events: plan.kind === "answer" ? [...plan.events, ...events] : events,
    });
  } catch (error) {
    const usedKey = turn.idempotencyKey;
    if (error instanceof StoreError && error.code === "duplicate" && usedKey) {
      const existing = await store.findTurnByIdempotencyKey(sessionId, usedKey);
      if (existing) return duplicateOf(existing);
    }
    if (error instanceof StoreError && error.code === "session_state") {
      throw new ConflictError(
        "session_ended",
        `Session ${sessionId} has ended; start a new session`,
        { path: "sessionId" },
      );
    }
    throw error;
  }
  return wake(deps, session, turn, running, plan.kind === "answer");
}

/** Wakes the session's actor for what was written: a steer, an interrupt, or a queued turn. */
async function wake(
  { ctx, actors, kick }: SendTurnDeps,
  session: SessionRecord,
  turn: TurnRecord,
  running: TurnRecord[],
  answered: boolean,
): Promise<SendTurnResult> {
  const sessionId = session.id;
  if (turn.mode === "steer" && running[0]) {
    actors.get(sessionId)?.noteSteering();
    kick(sessionId);
    return { turnId: turn.id, status: "running", duplicate: false };
  }
  if (turn.mode === "interrupt" && running.length > 0) {
    await interruptTurns(ctx, actors, sessionId, running, turn.id);
    kick(sessionId);
  } else {
    // A queued turn (or an answer, which changed the session) leaves the session's status and
    // lease as read; the actor can start from this copy.
    kick(sessionId, answered ? undefined : session);
  }
  return { turnId: turn.id, status: "queued", duplicate: false };
}

function checkedKey(key: unknown): string | undefined {
  if (key !== undefined && (typeof key !== "string" || key.length === 0 || key.length > 256)) {
    throw new ConflictError("invalid_input", "idempotencyKey must be 1 to 256 characters", {
      path: "idempotencyKey",
    });
  }
  return key;
}

function queuedTurn(
  sessionId: string,
  input: AgentInput,
  mode: TurnRecord["mode"],
  idempotencyKey: string | null,
): TurnRecord {
  const now = isoNow();
  return {
    id: newId("turn"),
    sessionId,
    input,
    mode,
    status: "queued",
    outcome: null,
    error: null,
    idempotencyKey,
    steps: 0,
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    settledAt: null,
  };
}

/** message.received and turn.queued, then what the turn does to the running ones. */
function receivedEvents(
  turn: TurnRecord,
  input: AgentInput,
  mode: TurnRecord["mode"],
  running: TurnRecord[],
): NewEvent[] {
  const events: NewEvent[] = [
    { type: "message.received", turnId: turn.id, data: { input, mode } },
    { type: "turn.queued", turnId: turn.id, data: { mode } },
  ];
  if (mode === "steer" && running[0]) {
    events.push({ type: "turn.steered", turnId: turn.id, data: { activeTurnId: running[0].id } });
  }
  if (mode === "interrupt" && running.length > 0) {
    events.push({
      type: "turn.interrupted",
      turnId: turn.id,
      data: { interruptedTurnIds: running.map((t) => t.id) },
    });
  }
  return events;
}

/** Another runtime's lease on the session is still live: that runtime takes the turn. */
function heldElsewhere(session: SessionRecord, runtimeId: string): boolean {
  const lease = session.lease;
  return lease != null && lease.runtimeId !== runtimeId && lease.expiresAt > Date.now();
}

function duplicateOf(turn: TurnRecord): SendTurnResult {
  return {
    turnId: turn.id,
    status: turn.status === "queued" ? "queued" : "running",
    duplicate: true,
  };
}
