import type { EventRecord } from "@opencomputer/runtime";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../src/client.ts";
import type { OneShotBackend } from "../src/one-shot/backend.ts";
import { httpBackend } from "../src/one-shot/http-backend.ts";
import { runOneShot } from "../src/one-shot/run.ts";
import { afterOf, type EventsProxy, type ProxyOptions, startEventsProxy } from "./events-proxy.ts";
import { KEY, type StreamServer, startStreamServer } from "./stream-server.ts";

let server: StreamServer;
let proxy: EventsProxy | undefined;
let backend: OneShotBackend | undefined;

beforeAll(async () => {
  server = await startStreamServer();
});
afterEach(async () => {
  await backend?.close();
  await proxy?.close();
  backend = undefined;
  proxy = undefined;
});
afterAll(async () => {
  await server?.close();
});

/** The backend as the CLI makes it, talking to the server through a recording proxy. */
async function throughProxy(options: ProxyOptions = {}): Promise<OneShotBackend> {
  proxy = await startEventsProxy(server.url, options);
  backend = httpBackend(new ApiClient({ url: proxy.url, key: KEY }));
  return backend;
}

/**
 * Runs one message on the `counter` agent, collects every event the one-shot printed, and checks
 * every answer of `nextEvents` itself (the one-shot would hide a repeat by skipping it): the
 * events right after the cursor, each seq once, none missing.
 */
async function countTurn(b: OneShotBackend) {
  const printed: EventRecord[] = [];
  const checked: OneShotBackend = Object.create(b);
  checked.nextEvents = async (sessionId, after) => {
    const events = await b.nextEvents(sessionId, after);
    const seqs = events.map((e) => e.seq);
    expect(seqs, `nextEvents(after ${after})`).toEqual(seqs.map((_, i) => after + 1 + i));
    return events;
  };
  const outcome = await runOneShot(checked, {
    agentRef: "counter",
    text: "count please",
    print: (e) => printed.push(e),
    say: () => {},
  });
  return { outcome, printed };
}

/** Every event of the turn, once each, in seq order from 1, up to the turn's end. */
function expectWholeTurn(printed: EventRecord[]) {
  expect(printed.map((e) => e.seq)).toEqual(printed.map((_, i) => i + 1));
  const types = printed.map((e) => e.type);
  expect(types[0]).toBe("session.created");
  expect(types.filter((t) => t === "tool.progress")).toHaveLength(8);
  expect(types.at(-1)).toBe("turn.completed");
}

/** Resolves when `predicate` holds, checking every 20 ms; fails after `timeoutMs`. */
async function until(predicate: () => boolean, what: string, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the one-shot's HTTP backend reads events over SSE", () => {
  it("streams a turn's events over one connection, in order, with no polling", async () => {
    const { outcome, printed } = await countTurn(await throughProxy());
    expect(outcome.status).toBe("completed");
    expectWholeTurn(printed);
    // One request for the events, answered as a stream, that carried all of them (and perhaps
    // some committed after the turn's end, which the one-shot does not print).
    const requests = proxy!.eventRequests();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ askedForStream: true, streamed: true });
    expect(afterOf(requests[0]!)).toBe(0);
    expect(requests[0]!.forwarded.slice(0, printed.length)).toEqual(printed.map((e) => e.seq));
  });

  it("falls back to polling the JSON route when the server answers without a stream", async () => {
    const { outcome, printed } = await countTurn(await throughProxy({ noStream: true }));
    expect(outcome.status).toBe("completed");
    expectWholeTurn(printed);
    // The stream was asked for once; the answer was JSON, so the rest were polls.
    const requests = proxy!.eventRequests();
    expect(requests.filter((r) => r.askedForStream)).toHaveLength(1);
    expect(requests[0]!.askedForStream).toBe(true);
    const polls = requests.slice(1);
    expect(polls.length).toBeGreaterThan(1);
    expect(polls.every((r) => !r.askedForStream && !r.streamed)).toBe(true);
  });

  it("reconnects from the cursor when the stream drops mid-frame, repeating nothing", async () => {
    const { outcome, printed } = await countTurn(await throughProxy({ dropAfter: 3 }));
    expect(outcome.status).toBe("completed");
    expectWholeTurn(printed);
    const [first, second, ...rest] = proxy!.eventRequests();
    expect(rest).toEqual([]);
    // The first stream was cut after three whole events (and half of a fourth)...
    expect(first).toMatchObject({ streamed: true, closed: true });
    expect(first!.forwarded).toEqual([1, 2, 3]);
    // ...so the second starts after the third and carries the rest, without polling between.
    expect(second).toMatchObject({ askedForStream: true, streamed: true });
    expect(afterOf(second!)).toBe(3);
    const carried = [...first!.forwarded, ...second!.forwarded];
    expect(carried.slice(0, printed.length)).toEqual(printed.map((e) => e.seq));
  });

  it("close() ends the stream and any wait, and later reads are refused", async () => {
    const b = await throughProxy();
    const sessionId = await b.createSession("counter");
    const [created] = await b.nextEvents(sessionId, 0);
    expect(created).toMatchObject({ seq: 1, type: "session.created" });
    const stream = proxy!.eventRequests()[0]!;
    expect(stream).toMatchObject({ streamed: true, closed: false });

    // Nothing more happens in this session: this read waits for new events until close().
    const waiting = b.nextEvents(sessionId, 1);
    await b.close();
    await expect(waiting).resolves.toEqual([]);
    await until(() => stream.closed, "the stream's connection closed");
    await expect(b.nextEvents(sessionId, 1)).rejects.toMatchObject({ code: "closed" });
    expect(proxy!.eventRequests()).toHaveLength(1);
  });
});
