import { createParser } from "eventsource-parser";
import type { SessionEvent } from "./types.ts";

/**
 * Reads a session's Server-Sent Events (`id: <seq>`, `data: <event JSON>`, heartbeats as
 * comments) and hands them over in batches: every event that arrived in one network chunk
 * together, so a burst is folded (and rendered) once. `onEvents` returns false to stop reading.
 * Resolves when the stream ends or is stopped; rejects when the connection fails.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvents: (events: SessionEvent[]) => boolean,
): Promise<void> {
  let batch: SessionEvent[] = [];
  let malformed: Error | null = null;
  const parser = createParser({
    onEvent(message) {
      try {
        batch.push(JSON.parse(message.data) as SessionEvent);
      } catch (error) {
        malformed ??= new Error(`an event of the stream is not JSON: ${String(error)}`);
      }
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
      // A frame that is not JSON means the stream cannot be trusted from here: reconnect.
      if (malformed) throw malformed;
      if (batch.length === 0) continue;
      const events = batch;
      batch = [];
      if (!onEvents(events)) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
