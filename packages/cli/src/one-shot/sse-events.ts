import type { EventRecord } from "@opencomputer/runtime";
import { createParser } from "eventsource-parser";

export interface StreamHandlers {
  /** The events of one network chunk, in the order the server sent them. */
  events(events: EventRecord[]): void;
  /** A heartbeat (an SSE comment): the connection is alive though nothing happened. */
  heartbeat(): void;
}

/**
 * Reads a session's Server-Sent Events (`GET /sessions/<id>/events` with
 * `Accept: text/event-stream`): each frame's `data` is one event as JSON, heartbeats are
 * comments. Resolves when the server ends the stream; rejects when the connection fails or a
 * frame is not an event, since the stream cannot be trusted after that (the caller reconnects
 * from its cursor). A frame cut off by a dropped connection is never handed over.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  on: StreamHandlers,
): Promise<void> {
  let batch: EventRecord[] = [];
  let beat = false;
  let malformed: Error | null = null;
  const parser = createParser({
    onEvent(message) {
      const event = parseEvent(message.data);
      if (event) batch.push(event);
      else
        malformed ??= new Error(
          `The event stream sent a frame that is not an event: ${message.data.slice(0, 200)}`,
        );
    },
    onComment() {
      beat = true;
    },
  });
  // `stream: true` keeps a character split across two chunks whole.
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      if (malformed) throw malformed;
      if (batch.length > 0) {
        const events = batch;
        batch = [];
        on.events(events);
      } else if (beat) on.heartbeat();
      beat = false;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The event in a frame's data, or null when it is not JSON or has no seq and type. */
function parseEvent(data: string): EventRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  const e = value as Partial<EventRecord> | null;
  return e !== null &&
    typeof e === "object" &&
    Number.isSafeInteger(e.seq) &&
    typeof e.type === "string"
    ? (e as EventRecord)
    : null;
}
