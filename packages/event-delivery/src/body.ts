// The delivery body (`opencomputer.event-delivery/v1`) and the `data` a delivery keeps: the
// outcome and identifiers only, never prompts, tool output or credentials.
import type { EventDelivery, JsonObject } from "@opencomputer/protocol";
import type { DeliveryRow, OutboxEvent } from "@opencomputer/runtime";

/** A delivered result text is cut to this many bytes (UTF-8) with `truncated: true`. */
export const MAX_RESULT_BYTES = 16 * 1024;
/** A failure description is cut to this many characters. */
const MAX_ERROR_CHARS = 500;

function cut(text: string): { text: string; truncated: boolean } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= MAX_RESULT_BYTES) return { text, truncated: false };
  // Decoding a cut byte array drops a split final character rather than corrupting it.
  const head = new TextDecoder().decode(bytes.slice(0, MAX_RESULT_BYTES)).replace(/\uFFFD$/, "");
  return { text: head, truncated: true };
}

/** The body's `data` for an event from the outbox. */
export function deliveryData(event: OutboxEvent, resultText: string | null): JsonObject {
  if (event.type === "turn.completed")
    return { status: "completed", result: cut(resultText ?? "") };
  if (event.type === "turn.failed") {
    const e = event.data as { code?: unknown; message?: unknown };
    const text = [e.code, e.message].filter((x) => typeof x === "string").join(": ");
    return { status: "failed", error: text.slice(0, MAX_ERROR_CHARS) || "failed" };
  }
  const reason = (event.data as { reason?: unknown }).reason;
  return { status: "cancelled", reason: typeof reason === "string" ? reason : "interrupted" };
}

/** The JSON posted for a delivery: the same on every attempt. */
export function deliveryBody(row: DeliveryRow): string {
  const body: EventDelivery = {
    schema: "opencomputer.event-delivery/v1",
    deliveryId: row.id,
    eventId: row.eventId,
    sequence: row.sequence,
    occurredAt: row.occurredAt,
    projectId: row.projectId,
    environment: row.environment,
    agentId: row.agentId,
    deploymentId: row.deploymentId,
    sessionId: row.sessionId,
    turnId: row.turnId,
    type: row.eventType,
    data: row.data as EventDelivery["data"],
    ...(row.replayOf !== null ? { replayOf: row.replayOf } : {}),
  };
  return JSON.stringify(body);
}
