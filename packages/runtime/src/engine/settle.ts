import type { EventData } from "@opencomputer/protocol";
import { isoNow } from "../clock.ts";
import type { Fence, NewEvent, WriteOp } from "../ports/store.ts";
import { StoreError } from "../ports/store-errors.ts";

/** How a completed turn ended. */
export type TurnOutcome = EventData<"turn.completed">["outcome"];

import type {
  SessionStatus,
  ToolCallRecord,
  TurnError,
  TurnRecord,
  TurnStatus,
} from "../ports/records.ts";
import { type EngineContext, write } from "./context.ts";

export type Settlement =
  | { status: "completed"; outcome: TurnOutcome }
  | { status: "failed"; error: TurnError }
  | {
      status: "cancelled";
      reason: "interrupted" | "session_ended";
      replacementTurnId?: string;
      requestedAt: number;
    };

export interface SettleOptions {
  fence?: Fence;
  /** The turn's agent and deployment, for its span (tracing.ts), when the caller knows them. */
  trace?: { agentId: string; deploymentId: string };
  /** Written before the settlement, in the same transaction (e.g. the last model step). */
  ops?: WriteOp[];
  events?: NewEvent[];
  /** The session status afterwards; `idle` unless the session is ending. */
  sessionStatus?: SessionStatus;
  /** Calls this settlement completes itself (e.g. `ask`): not reported as failed. */
  completes?: ReadonlySet<string>;
  /** Extra ops and events after the turn's own (e.g. `session.ended`). */
  after?: { ops: WriteOp[]; events: NewEvent[] };
  /**
   * What the caller already knows: the worker running the turn, under its lease, knows the
   * session's status and the turn's open calls without asking the store. The first attempt
   * trusts it; the write's guards (session status, open calls) refuse it when it is stale, and
   * the next attempt reads the store as usual. It only saves two reads.
   */
  known?: KnownState;
}

export interface KnownState {
  sessionStatus: SessionStatus;
  openCalls: readonly ToolCallRecord[];
}

const ATTEMPTS = 20;

/**
 * Settles a running turn in one write: every call still open gets a synthetic `tool.failed`
 * with `settledBy`, then the terminal turn event and the session's status change. The write is
 * conditional on the turn still running and on the set of open calls being what was read, so
 * a call that completes meanwhile is never reported failed; on such a race it reads again.
 * Returns false when the turn had already settled.
 */
export async function settleTurn(
  ctx: EngineContext,
  turn: TurnRecord,
  settlement: Settlement,
  options: SettleOptions = {},
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    const state = attempt === 0 && options.known ? options.known : await readState(ctx, turn);
    if (!state) return false;
    const open = state.openCalls;
    const now = isoNow();
    const ops: WriteOp[] = [...(options.ops ?? [])];
    const events: NewEvent[] = [...(options.events ?? [])];
    const settledBy = settlement.status === "cancelled" ? settlement.reason : "turn_failed";
    for (const call of open) {
      if (options.completes?.has(call.callId)) continue;
      const message =
        settlement.status === "cancelled"
          ? `The turn was ${settlement.reason === "interrupted" ? "interrupted" : "ended"} before ${call.tool} finished`
          : `The turn failed before ${call.tool} finished`;
      ops.push({
        type: "toolCall.upsert",
        call: { ...call, status: "failed", error: message, settledAt: now },
      });
      events.push({
        type: "tool.failed",
        turnId: turn.id,
        data: { tool: call.tool, callId: call.callId, title: call.tool, message, settledBy },
      });
    }
    ops.push({ type: "turn.update", id: turn.id, patch: turnPatch(settlement, now) });
    events.push(terminalEvent(turn, settlement, open));
    const to = options.sessionStatus ?? "idle";
    const from = state.sessionStatus;
    if (from !== to && from !== "ended") {
      ops.push({ type: "session.update", patch: { status: to } });
      events.push({ type: "session.status_changed", data: { from, to } });
    }
    if (options.after) {
      ops.push(...options.after.ops);
      events.push(...options.after.events);
    }
    try {
      await write(ctx, turn.sessionId, {
        ...(options.fence ? { fence: options.fence } : {}),
        expectTurn: { id: turn.id, status: ["running"] },
        expectSession: { status: [from] },
        expectOpenCalls: { turnId: turn.id, callIds: open.map((c) => c.callId) },
        ops,
        events,
      });
      traceSettled(ctx, turn, settlement, now, options.trace);
      return true;
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      if (error.code === "turn_not_active") return false;
      if ((error.code === "calls_changed" || error.code === "session_state") && attempt < ATTEMPTS)
        continue;
      throw error;
    }
  }
}

async function readState(ctx: EngineContext, turn: TurnRecord): Promise<KnownState | null> {
  const [session, calls] = await Promise.all([
    ctx.store.getSession(turn.sessionId),
    ctx.store.listToolCalls(turn.sessionId, turn.id),
  ]);
  if (!session) return null;
  return { sessionStatus: session.status, openCalls: calls.filter((c) => c.status === "started") };
}

function turnPatch(settlement: Settlement, now: string) {
  const status: TurnStatus = settlement.status;
  return {
    status,
    settledAt: now,
    outcome: settlement.status === "completed" ? settlement.outcome : null,
    error:
      settlement.status === "failed"
        ? settlement.error
        : settlement.status === "cancelled"
          ? { code: settlement.reason, message: `The turn was cancelled (${settlement.reason})` }
          : null,
  };
}

function terminalEvent(
  turn: TurnRecord,
  settlement: Settlement,
  open: readonly ToolCallRecord[],
): NewEvent {
  if (settlement.status === "completed") {
    return { type: "turn.completed", turnId: turn.id, data: { outcome: settlement.outcome } };
  }
  if (settlement.status === "failed") {
    return { type: "turn.failed", turnId: turn.id, data: settlement.error };
  }
  const data: EventData<"turn.cancelled"> = {
    reason: settlement.reason,
    settledAfterMs: Math.max(0, Date.now() - settlement.requestedAt),
    operationsSettled: open.length === 0,
    computerTerminated: false,
  };
  if (settlement.replacementTurnId) data.replacementTurnId = settlement.replacementTurnId;
  return { type: "turn.cancelled", turnId: turn.id, data };
}

/** The turn's own span, by the process whose write settled it (ports/tracing.ts). */
function traceSettled(
  ctx: EngineContext,
  turn: TurnRecord,
  settlement: Settlement,
  now: string,
  known: SettleOptions["trace"],
): void {
  const error = turnPatch(settlement, now).error;
  ctx.tracing.turnSettled({
    sessionId: turn.sessionId,
    turnId: turn.id,
    ...(known ?? {}),
    startedAt: turn.startedAt ?? turn.createdAt,
    settledAt: now,
    outcome: settlement.status === "completed" ? settlement.outcome : settlement.status,
    ...(error ? { error: { code: error.code, message: error.message } } : {}),
  });
}
