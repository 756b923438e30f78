// The reader on byte streams cut where a network would cut them: inside a frame, inside a UTF-8
// character, between frames. The CLI's and the React hook's tests run it against the real
// server's SSE; these pin the edges.

import { describe, expect, it } from "vitest";
import { readEventStream, type StreamedEvent } from "../src/index.ts";

interface Event extends StreamedEvent {
  data?: unknown;
}

/** A body that delivers `chunks` (text, or raw bytes) one read at a time. */
function body(chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> & {
  cancelled: () => boolean;
} {
  let i = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
    },
    cancel() {
      cancelled = true;
    },
  });
  return Object.assign(stream, { cancelled: () => cancelled });
}

const frame = (e: Event) => `id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`;

async function collect(chunks: Array<string | Uint8Array>) {
  const batches: Event[][] = [];
  let beats = 0;
  await readEventStream<Event>(body(chunks), {
    events: (events) => {
      batches.push(events);
    },
    heartbeat: () => {
      beats++;
    },
  });
  return { batches, beats };
}

describe("readEventStream", () => {
  it("hands over the events of one chunk together, in order", async () => {
    const a = { seq: 1, type: "a" };
    const b = { seq: 2, type: "b" };
    const c = { seq: 3, type: "c" };
    const { batches } = await collect([frame(a) + frame(b), frame(c)]);
    expect(batches).toEqual([[a, b], [c]]);
  });

  it("joins a frame cut across chunks, and a character cut inside its bytes", async () => {
    const e = { seq: 7, type: "message.completed", data: { text: "é🧪 done" } };
    const bytes = new TextEncoder().encode(frame(e));
    // Cut inside the 4-byte emoji and again inside the JSON.
    const emoji = bytes.indexOf(0xf0);
    const { batches } = await collect([
      bytes.slice(0, emoji + 2),
      bytes.slice(emoji + 2, emoji + 9),
      bytes.slice(emoji + 9),
    ]);
    expect(batches).toEqual([[e]]);
  });

  it("reports a chunk of heartbeats as one heartbeat, and none with events", async () => {
    const e = { seq: 1, type: "a" };
    const { batches, beats } = await collect([": ping\n\n: ping\n\n", `: ping\n\n${frame(e)}`]);
    expect(beats).toBe(1);
    expect(batches).toEqual([[e]]);
  });

  it("never hands over a frame the connection cut off", async () => {
    const e = { seq: 1, type: "a" };
    const { batches } = await collect([frame(e), 'id: 2\ndata: {"seq":2,"type":"b"']);
    expect(batches).toEqual([[e]]);
  });

  it("rejects a frame that is not JSON, or not an event, naming what came", async () => {
    await expect(collect(["data: nope\n\n"])).rejects.toThrow(
      "The event stream sent a frame that is not an event: nope",
    );
    await expect(collect([`data: ${JSON.stringify({ seq: "1", type: "a" })}\n\n`])).rejects.toThrow(
      /not an event/,
    );
    await expect(collect([`data: ${JSON.stringify({ seq: 1 })}\n\n`])).rejects.toThrow(
      /not an event/,
    );
  });

  it("stops when the handler returns false, and cancels the body", async () => {
    const stream = body([frame({ seq: 1, type: "a" }), frame({ seq: 2, type: "b" })]);
    const seen: number[] = [];
    await readEventStream<Event>(stream, {
      events: (events) => {
        seen.push(...events.map((e) => e.seq));
        return false;
      },
    });
    expect(seen).toEqual([1]);
    expect(stream.cancelled()).toBe(true);
  });

  it("rejects when the connection fails mid-stream", async () => {
    let sent = false;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(new Error("socket hang up"));
        else controller.enqueue(new TextEncoder().encode(frame({ seq: 1, type: "a" })));
        sent = true;
      },
    });
    const seen: number[] = [];
    await expect(
      readEventStream<Event>(failing, {
        events: (events) => seen.push(...events.map((e) => e.seq)),
      }),
    ).rejects.toThrow("socket hang up");
    expect(seen).toEqual([1]);
  });
});
