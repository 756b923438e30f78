// Reading a session's Server-Sent Events (`GET /sessions/<id>/events` with
// `Accept: text/event-stream`), shared by the CLI (Node) and the React hook (browsers): web
// streams and TextDecoder only, so it runs in both.
import { createParser } from "eventsource-parser";

/** What a frame's data must be: an event of the log, with its seq and type. */
export interface StreamedEvent {
  seq: number;
  type: string;
}

export interface EventStreamHandlers<E extends StreamedEvent> {
  /**
   * The events of one network chunk, in the order the server sent them: a burst is handed over
   * (and folded, rendered) once. Returning false stops the reading; any other value goes on.
   */
  events(events: E[]): unknown;
  /** A heartbeat (an SSE comment) in a chunk without events: the connection is alive. */
  heartbeat?(): void;
}

/**
 * Reads the stream: each frame's `data` is one event as JSON, heartbeats are comments. Resolves
 * when the server ends the stream or `events` returns false; rejects when the connection fails or
 * a frame is not an event, since the stream cannot be trusted after that (the caller reconnects
 * from its cursor). A frame cut off by a dropped connection is never handed over.
 */
export async function readEventStream<E extends StreamedEvent>(
  body: ReadableStream<Uint8Array>,
  on: EventStreamHandlers<E>,
): Promise<void> {
  let batch: E[] = [];
  let beat = false;
  let malformed: Error | null = null;
  const parser = createParser({
    onEvent(message) {
      const event = parseEvent<E>(message.data);
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
        beat = false;
        if (on.events(events) === false) return;
      } else if (beat) {
        beat = false;
        on.heartbeat?.();
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The event in a frame's data, or null when it is not JSON or has no seq and type. */
function parseEvent<E extends StreamedEvent>(data: string): E | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  const e = value as Partial<StreamedEvent> | null;
  return e !== null &&
    typeof e === "object" &&
    Number.isSafeInteger(e.seq) &&
    typeof e.type === "string"
    ? (e as E)
    : null;
}
