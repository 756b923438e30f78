// What the write that starts a turn holds: the new turn (or the re-queued one a dead runtime
// left running), turn.started, the session's move to running, and the user's message once.

import type { MessageRecord, SessionRecord, TurnRecord } from "../ports/records.ts";
import type { NewEvent, WriteOp } from "../ports/store.ts";

export interface TurnStartInput {
  /** Events that say a new turn was received and queued (absent for a turn already stored). */
  received: NewEvent[] | undefined;
  /** The user's message, when the conversation does not hold it yet. */
  message: MessageRecord | null;
  runtimeId: string;
  now: string;
}

export function turnStartWrite(
  session: SessionRecord,
  turn: TurnRecord,
  { received, message, runtimeId, now }: TurnStartInput,
): { ops: WriteOp[]; events: NewEvent[] } {
  const ops: WriteOp[] = [];
  const events: NewEvent[] = [];
  if (received) {
    // A new turn: inserted as started, after the events that say it was received and queued.
    ops.push({ type: "turn.insert", turn: { ...turn, status: "running", startedAt: now } });
    events.push(...received);
  } else {
    if (turn.status === "running") {
      events.push(
        { type: "runtime.disconnected", data: { requeuedTurnIds: [turn.id], runtimeId } },
        { type: "turn.queued", turnId: turn.id, data: { mode: turn.mode, requeued: true } },
      );
    }
    ops.push({
      type: "turn.update",
      id: turn.id,
      patch: { status: "running", startedAt: turn.startedAt ?? now },
    });
  }
  events.push({
    type: "turn.started",
    turnId: turn.id,
    data: turn.startedAt ? { resumed: true } : {},
  });
  if (session.status !== "running") {
    ops.push({ type: "session.update", patch: { status: "running" } });
    events.push({ type: "session.status_changed", data: { from: session.status, to: "running" } });
  }
  if (message) ops.push({ type: "message.insert", message });
  return { ops, events };
}
