// Writes a session whose turn settles with the given event, through the store's own write path
// (`Store.apply`), exactly as the engine commits a turn's end.
import type { Store } from "@opencomputer/runtime";
import {
  createdEvents,
  ev,
  messageRecord,
  sessionRecord,
  turnRecord,
} from "@opencomputer/testkit/store-fixtures";

export async function settleTurn(
  store: Store,
  type: "turn.completed" | "turn.failed" | "turn.cancelled",
  options: { agentId?: string; text?: string; environment?: string } = {},
): Promise<{ sessionId: string; turnId: string }> {
  const s = sessionRecord({
    agentId: options.agentId ?? "agent_a",
    environment: options.environment ?? "production",
  });
  await store.createSession(s, createdEvents(s));
  const turn = turnRecord(s.id);
  await store.apply(s.id, { ops: [{ type: "turn.insert", turn }], events: [] });
  const message = {
    ...messageRecord(s.id, turn.id),
    content: [{ type: "text" as const, text: options.text ?? "Done: 3 flags removed." }],
  };
  const data =
    type === "turn.completed"
      ? { outcome: "completed" }
      : type === "turn.failed"
        ? { code: "model_unavailable", message: "The model provider did not answer." }
        : {
            reason: "interrupted",
            settledAfterMs: 0,
            operationsSettled: true,
            computerTerminated: false,
          };
  await store.apply(s.id, {
    ops: [{ type: "message.insert", message }],
    events: [ev(type, data, turn.id)],
  });
  return { sessionId: s.id, turnId: turn.id };
}
