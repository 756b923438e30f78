import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import type { MessageRecord } from "../ports/records.ts";
import { write } from "./context.ts";
import { inputToContent } from "./conversation.ts";
import { guard, type TurnScope } from "./turn-scope.ts";

/**
 * Folds queued `steer` turns into the running turn: each becomes a user message of this turn
 * before its next model step, and its own turn record completes with outcome `steered`. A steer
 * that arrives after the turn's last step simply runs as the next turn.
 */
export async function absorbSteering(scope: TurnScope): Promise<void> {
  scope.steering.pending = false;
  const turns = await scope.ctx.store.listActiveTurns(scope.sessionId);
  const steers = turns.filter((t) => t.status === "queued" && t.mode === "steer");
  if (steers.length === 0) return;
  const now = isoNow();
  const messages: MessageRecord[] = steers.map((t) => ({
    id: newId("msg"),
    sessionId: scope.sessionId,
    turnId: scope.turn.id,
    role: "user",
    content: inputToContent(t.input),
    createdAt: now,
  }));
  await write(scope.ctx, scope.sessionId, {
    ...guard(scope),
    ops: [
      ...steers.map((t) => ({
        type: "turn.update" as const,
        id: t.id,
        patch: { status: "completed" as const, outcome: "steered", startedAt: now, settledAt: now },
      })),
      ...messages.map((message) => ({ type: "message.insert" as const, message })),
    ],
    events: steers.map((t) => ({
      type: "turn.completed",
      turnId: t.id,
      data: { outcome: "steered", activeTurnId: scope.turn.id },
    })),
  });
  for (const m of messages) scope.conversation.addMessage(m);
}
