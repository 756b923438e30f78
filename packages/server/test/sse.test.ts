import { useModel } from "@opencomputer/agent";
import type { EventRecord } from "@opencomputer/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, startServer, type TestServer } from "./helpers.ts";

function slow() {
  useModel("script/test");
  return "Answer.";
}

let s: TestServer;
beforeAll(async () => {
  s = await startServer({
    agents: { slow },
    // Delays so the stream is open before the turn's events are written, then live.
    steps: [
      { text: "one", delayMs: 200 },
      { text: "two", delayMs: 200 },
    ],
    handler: { pollMs: 50, heartbeatMs: 300 },
  });
});
afterAll(async () => {
  expect(s.errors).toEqual([]);
  await s.close();
});

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** Reads SSE frames from a streaming response until `stop` says so, then aborts the request. */
async function readFrames(
  sessionId: string,
  headers: Record<string, string>,
  stop: (frames: Frame[]) => boolean,
  query = "",
): Promise<Frame[]> {
  const abort = new AbortController();
  const res = await fetch(`${s.url}/sessions/${sessionId}/events${query}`, {
    headers: { "x-api-key": KEY, accept: "text/event-stream", ...headers },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const frames: Frame[] = [];
  let buffer = "";
  try {
    while (!stop(frames)) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const frame: Frame = {};
        for (const line of buffer.slice(0, end).split("\n")) {
          if (line.startsWith(":")) frame.comment = line.slice(1).trim();
          else {
            const colon = line.indexOf(":");
            (frame as Record<string, string>)[line.slice(0, colon)] = line.slice(colon + 2);
          }
        }
        frames.push(frame);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
      }
    }
  } finally {
    abort.abort();
  }
  return frames;
}

const eventsOf = (frames: Frame[]): EventRecord[] =>
  frames.filter((f) => f.data !== undefined).map((f) => JSON.parse(f.data!) as EventRecord);

const settled = (frames: Frame[], count: number) =>
  eventsOf(frames).filter((e) => e.type === "turn.completed").length >= count;

describe("GET /sessions/<id>/events as SSE", () => {
  it("delivers a whole turn live, in order, with id = seq and event = type", async () => {
    const { session } = await s.runtime.sessions.create({ agentId: "slow" });
    const reading = readFrames(session.id, {}, (f) => settled(f, 1));
    await new Promise((r) => setTimeout(r, 50));
    await s.runtime.sessions.sendTurn(session.id, { text: "hi" });
    const frames = await reading;
    const events = eventsOf(frames);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.type).toBe("session.created");
    expect(events.map((e) => e.type)).toContain("message.completed");
    for (const f of frames.filter((x) => x.data)) {
      const e = JSON.parse(f.data!) as EventRecord;
      expect(f.id).toBe(String(e.seq));
      expect(f.event).toBe(e.type);
    }
    const stored = await s.runtime.sessions.events(session.id, 0);
    expect(events).toEqual(stored.slice(0, events.length));
  });

  it("resumes after Last-Event-ID (over ?after=) without gap or duplicate", async () => {
    const { session } = await s.runtime.sessions.create({ agentId: "slow" });
    const first = await s.runtime.sessions.sendTurn(session.id, { text: "hi" });
    // Disconnect part-way through the first turn.
    const part = eventsOf(await readFrames(session.id, {}, (f) => eventsOf(f).length >= 4));
    const last = part[part.length - 1]!.seq;
    await s.runtime.sessions.waitForTurn(session.id, first.turnId);
    const second = s.runtime.sessions.sendTurn(session.id, { text: "again" });
    const rest = eventsOf(
      await readFrames(
        session.id,
        { "last-event-id": String(last) },
        (f) => settled(f, 2),
        "?after=1",
      ),
    );
    await second;
    const all = [...part, ...rest];
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    const stored = await s.runtime.sessions.events(session.id, 0);
    expect(all).toEqual(stored.slice(0, all.length));
  });

  it("sees events written by another process through the fallback poll", async () => {
    const { session } = await s.runtime.sessions.create({ agentId: "slow" });
    // A subscription-less runtime view: only the poll can wake the stream for this write.
    const origSubscribe = s.runtime.sessions.subscribe;
    s.runtime.sessions.subscribe = () => () => {};
    try {
      const reading = readFrames(session.id, {}, (f) => settled(f, 1));
      await new Promise((r) => setTimeout(r, 50));
      await s.runtime.sessions.sendTurn(session.id, { text: "hi" });
      expect(settled(await reading, 1)).toBe(true);
    } finally {
      s.runtime.sessions.subscribe = origSubscribe;
    }
  });

  it("sends heartbeat comments on an idle stream; 404 for an unknown session", async () => {
    const { session } = await s.runtime.sessions.create({ agentId: "slow" });
    const frames = await readFrames(session.id, {}, (f) =>
      f.some((x) => x.comment === "heartbeat"),
    );
    expect(frames.some((x) => x.comment === "heartbeat")).toBe(true);
    const res = await fetch(`${s.url}/sessions/ses_nope/events`, {
      headers: { "x-api-key": KEY, accept: "text/event-stream" },
    });
    expect(res.status).toBe(404);
    const bad = await fetch(`${s.url}/sessions/${session.id}/events`, {
      headers: { "x-api-key": KEY, accept: "text/event-stream", "last-event-id": "x" },
    });
    expect(bad.status).toBe(400);
  });
});
