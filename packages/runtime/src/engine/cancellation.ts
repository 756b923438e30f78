import { isoNow } from "../clock.ts";
import type { TurnRecord } from "../ports/records.ts";
import type { NewEvent, WriteOp } from "../ports/store.ts";
import { StoreError } from "../ports/store-errors.ts";
import { type EngineContext, write } from "./context.ts";
import { closeQuestion } from "./question-input.ts";
import type { SessionActor } from "./session-actor.ts";
import { settleTurn } from "./settle.ts";
import { cancelChildren } from "./subagent-cancel.ts";

type Actors = Map<string, SessionActor>;

/**
 * Cancels running turns. A turn this process runs is aborted and given its grace period; a turn
 * run elsewhere (or by nobody) is settled here, and its runtime's later writes are refused.
 */
export async function interruptTurns(
  ctx: EngineContext,
  actors: Actors,
  sessionId: string,
  running: TurnRecord[],
  replacementTurnId?: string,
  reason: "interrupted" | "session_ended" = "interrupted",
): Promise<string[]> {
  const requestedAt = Date.now();
  const sessionStatus = reason === "session_ended" ? "ended" : "idle";
  const done: string[] = [];
  for (const turn of running) {
    const settlement = {
      status: "cancelled" as const,
      reason,
      requestedAt,
      ...(replacementTurnId ? { replacementTurnId } : {}),
    };
    const local = actors.get(sessionId);
    let settled = false;
    if (local?.activeTurnId === turn.id)
      settled = await local.cancel(turn.id, settlement, sessionStatus);
    else settled = await settleTurn(ctx, turn, settlement, { sessionStatus });
    if (settled) done.push(turn.id);
  }
  // Ending the session ends its children (endSession); an interrupt interrupts theirs.
  if (reason === "interrupted") await cancelChildren(ctx, sessionId, done);
  return done;
}

/**
 * Ends a session: one write marks it ended and cancels its queued turns; then the running turn is
 * cancelled (`session_ended`). After the first write no turn can be queued (sendTurn refuses an
 * ended session); a turn queued while it was being written is cancelled by a last pass.
 */
export async function endSession(
  ctx: EngineContext,
  actors: Actors,
  sessionId: string,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const session = await ctx.store.getSession(sessionId);
    if (!session || session.status === "ended") return;
    const { ops, events } = cancelQueued(await ctx.store.listActiveTurns(sessionId));
    const close = closeQuestion(session, "session_ended");
    ops.push(...close.ops);
    events.push(...close.events);
    ops.push({ type: "session.update", patch: { status: "ended" } });
    events.push(
      { type: "session.status_changed", data: { from: session.status, to: "ended" } },
      { type: "session.ended", data: {} },
    );
    try {
      await write(ctx, sessionId, { expectSession: { status: [session.status] }, ops, events });
      break;
    } catch (error) {
      if (attempt > 20 || !(error instanceof StoreError && error.code === "session_state"))
        throw error;
    }
  }
  const turns = await ctx.store.listActiveTurns(sessionId);
  const running = turns.filter((t) => t.status === "running");
  await interruptTurns(ctx, actors, sessionId, running, undefined, "session_ended");
  const stragglers = cancelQueued(await ctx.store.listActiveTurns(sessionId));
  if (stragglers.ops.length > 0) await write(ctx, sessionId, stragglers);
  await cancelChildren(ctx, sessionId, "ended");
  await actors.get(sessionId)?.release();
  for (const tool of ctx.builtInTools.values()) {
    await tool.onSessionEnd?.(sessionId).catch((error: unknown) =>
      ctx.log.error("built-in tool cleanup failed", {
        tool: tool.id,
        sessionId,
        error: String(error),
      }),
    );
  }
}

function cancelQueued(turns: TurnRecord[]): { ops: WriteOp[]; events: NewEvent[] } {
  const now = isoNow();
  const ops: WriteOp[] = [];
  const events: NewEvent[] = [];
  for (const turn of turns) {
    if (turn.status !== "queued") continue;
    ops.push({
      type: "turn.update",
      id: turn.id,
      patch: {
        status: "cancelled",
        settledAt: now,
        error: { code: "session_ended", message: "The session ended before the turn ran" },
      },
    });
    events.push({
      type: "turn.cancelled",
      turnId: turn.id,
      data: {
        reason: "session_ended",
        settledAfterMs: 0,
        operationsSettled: true,
        computerTerminated: false,
      },
    });
  }
  return { ops, events };
}
