import { applied, type FixtureServer, KEY, startFixtureServer } from "@opencomputer/testkit/stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createApi } from "../src/api.ts";
import { AgentClient, type AgentSnapshot } from "../src/client.ts";
import type { SessionEvent } from "../src/types.ts";

let server: FixtureServer;
const headers = { "x-api-key": KEY };
const clients: AgentClient[] = [];

beforeAll(async () => {
  server = await startFixtureServer({ countTo: 6, everyMs: 150 });
});
afterAll(async () => {
  for (const c of clients) c.dispose();
  await server?.close();
});

type Transport = "stream" | "poll";
let transport: Transport = "stream";

function client(options: Partial<ConstructorParameters<typeof AgentClient>[0]>): AgentClient {
  const c = new AgentClient({
    basePath: server.url,
    headers,
    pollIntervalMs: 100,
    transport,
    ...options,
  });
  clients.push(c);
  c.start();
  return c;
}

/** Resolves with the first snapshot that satisfies `test` (the client's own notifications). */
function until(c: AgentClient, test: (s: AgentSnapshot) => boolean, timeoutMs = 10_000) {
  return new Promise<AgentSnapshot>((resolve, reject) => {
    if (test(c.getSnapshot())) return resolve(c.getSnapshot());
    const timer = setTimeout(() => {
      off();
      reject(
        new Error(`condition not met; last snapshot: ${JSON.stringify(c.getSnapshot().items)}`),
      );
    }, timeoutMs);
    const off = c.subscribe(() => {
      if (!test(c.getSnapshot())) return;
      clearTimeout(timer);
      off();
      resolve(c.getSnapshot());
    });
  });
}

describe.each(["stream", "poll"] as const)("AgentClient against a real server (%s)", (mode) => {
  beforeAll(() => {
    transport = mode;
  });

  it("create mode: the first send creates the session; a tool runs and the result commits", async () => {
    const seen: SessionEvent[] = [];
    const c = client({ agentId: "helper@development", onEvent: (e) => seen.push(e) });
    expect(c.getSnapshot().sessionId).toBeNull();
    await c.send("Where is A1?");
    const s = await until(
      c,
      (s) => !s.isRunning && s.messages.some((m) => m.text === "Order A1 has shipped."),
    );
    expect(s.sessionId).toMatch(/^ses_/);
    const tools = s.items.filter((i) => i.kind === "tool");
    expect(tools).toMatchObject([
      {
        tool: "lookup_order",
        status: "completed",
        progress: [{ step: "searching" }],
        output: { status: "shipped" },
      },
      { tool: "report", status: "completed", result: true, output: { status: "shipped" } },
    ]);
    const settled = await until(
      c,
      (s) => s.session?.result !== null && s.session?.result !== undefined,
    );
    expect(settled.session?.result?.data).toEqual({ status: "shipped" });
    // onEvent saw every event exactly once, in order.
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
    expect(seen.length).toBe(s.cursor);
  });

  it("attach mode with `after` reads only later events; answering a question continues the turn", async () => {
    const api = createApi({ basePath: server.url, headers });
    const { session } = await api.createSession({ agentId: "asker@development" });
    const c = client({ sessionId: session.id, after: 1 });
    await c.send("Change my plan");
    const asked = await until(c, (s) => s.question !== null && !s.isRunning);
    expect(asked.items.some((i) => i.seq <= 1)).toBe(false);
    expect(asked.question).toMatchObject({ text: "Which plan should I use?" });
    expect(asked.question?.options.map((o) => o.value)).toEqual(["basic", "pro"]);
    await c.answer({ value: "pro", text: "Pro" });
    const done = await until(
      c,
      (s) => s.question === null && s.messages.at(-1)?.text === "Going with your choice.",
    );
    expect(done.messages.map((m) => m.text)).toEqual([
      "Change my plan",
      "Pro",
      "Going with your choice.",
    ]);
    const again = await c.answer({ value: "basic" }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiError);
    expect((again as ApiError).code).toBe("no_open_question");
  });

  it("a server-created session with memory: each memory.saved reaches memorySaves and onMemorySaved", async () => {
    const memory = server.runtime.memory!;
    const key = { projectId: "default", environment: "development", resource: "notes" };
    const documentId = `topic-${mode}`;
    await memory.create(key, { id: documentId, title: "Topic" });
    const { session } = await server.runtime.sessions.create({
      agentId: "notetaker@development",
      memory: { notes: { scope: "document", id: documentId, access: "read-write" } },
    });
    const heard: unknown[] = [];
    const c = client({ sessionId: session.id, onMemorySaved: (save) => heard.push(save) });
    await c.send("Book the venue");
    const done = await until(c, (s) => s.memorySaves.length === 1 && !s.isRunning);
    const doc = await memory.get(key, documentId);
    expect(doc.text).toBe("Venue booked");
    const expected = { resource: "notes", documentId, revision: doc.revision, bytes: 12 };
    expect(done.memorySaves).toEqual([expect.objectContaining(expected)]);
    expect(heard).toEqual([expect.objectContaining(expected)]);
  });

  it("decides approvals: approve applies once, deny records the decision", async () => {
    const c = client({ agentId: "approver@development" });
    await c.send("Move c1 to pro and c2 to basic");
    const pending = await until(c, (s) => s.approvals.length === 2 && !s.isRunning);
    const [first, second] = pending.approvals;
    expect(first!.card).toMatchObject({
      title: "Move c1 to pro",
      facts: [
        { label: "Customer", value: "c1" },
        { label: "Plan", value: "pro" },
      ],
    });
    const before = applied.length;
    await c.decide(first!.id, "approve");
    await c.decide(second!.id, "deny");
    const decided = await until(c, (s) => s.approvals.every((a) => a.status !== "pending"));
    expect(decided.approvals.map((a) => a.status)).toEqual(["applied", "denied"]);
    expect(decided.approvals[0]!.outcome).toEqual({ moved: "c1" });
    expect(applied.slice(before)).toEqual([{ customerId: "c1", plan: "pro" }]);
    const twice = await c.decide(first!.id, "approve").catch((e: unknown) => e);
    expect((twice as ApiError).code).toBe("approval_decided");
  });

  it("a failing connection sets `error`, backs off, and resumes from the same cursor without a gap or repeat", async () => {
    const api = createApi({ basePath: server.url, headers });
    const { session } = await api.createSession({ agentId: "counter@development" });
    let failing = false;
    const requests: string[] = [];
    const c = client({
      sessionId: session.id,
      pollIntervalMs: 20,
      fetch: async (url, init) => {
        requests.push(`${init?.method} ${url.replace(server.url, "")}`);
        if (failing && url.includes("/events")) throw new TypeError("fetch failed");
        const response = await fetch(url, init);
        // An open stream breaks too, as a dropped connection would.
        return response.headers.get("content-type")?.includes("text/event-stream")
          ? new Response(
              breakable(response.body!, () => failing),
              response,
            )
          : response;
      },
    });
    await c.send("count");
    await until(c, (s) => s.items.some((i) => i.kind === "tool" && i.progress.length >= 2));
    failing = true;
    const broken = await until(c, (s) => s.error?.code === "network");
    const cursor = broken.cursor;
    failing = false;
    const done = await until(c, (s) => s.error === null && s.messages.at(-1)?.text === "Counted.");
    expect(done.cursor).toBeGreaterThan(cursor);
    const tool = done.items.find((i) => i.kind === "tool");
    expect(tool?.kind === "tool" && tool.progress).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ n })));
    // It only ever read events, posted the turn and read the session: it never ended it.
    expect(
      requests.filter(
        (r) =>
          !/^(GET \/sessions\/[^/]+(\/events\?after=\d+)?|POST \/sessions\/[^/]+\/turns)$/.test(r),
      ),
    ).toEqual([]);
    expect((await api.getSession(session.id)).status).not.toBe("ended");
  });

  it("stop() interrupts the running turn and the session stays open", async () => {
    const api = createApi({ basePath: server.url, headers });
    const { session } = await api.createSession({ agentId: "counter@development" });
    const c = client({ sessionId: session.id });
    await c.send("count");
    await until(c, (s) => s.items.some((i) => i.kind === "tool" && i.progress.length >= 1));
    await c.stop();
    const s = await until(c, (s) => s.items.some((i) => i.kind === "turn") && !s.isRunning);
    expect(s.items.find((i) => i.kind === "turn")).toMatchObject({
      status: "cancelled",
      code: "interrupted",
    });
    expect((await api.getSession(session.id)).status).not.toBe("ended");
  });
});

describe("AgentClient streaming", () => {
  beforeAll(() => {
    transport = "stream";
  });

  /** A fetch that records `<accept> <method> <path>` for every request. */
  function recording(requests: string[], rewrite?: (init: RequestInit) => RequestInit) {
    return async (url: string, init: RequestInit = {}) => {
      const accept = (init.headers as Record<string, string> | undefined)?.accept ?? "";
      requests.push(`${accept} ${init.method} ${url.replace(server.url, "")}`);
      return fetch(url, rewrite ? rewrite(init) : init);
    };
  }

  it("follows a whole turn over one connection, without polling", async () => {
    const api = createApi({ basePath: server.url, headers });
    const { session } = await api.createSession({ agentId: "counter@development" });
    const requests: string[] = [];
    const c = client({ sessionId: session.id, pollIntervalMs: 20, fetch: recording(requests) });
    await c.send("count");
    const done = await until(c, (s) => s.messages.at(-1)?.text === "Counted." && !s.isRunning);
    const tool = done.items.find((i) => i.kind === "tool");
    expect(tool?.kind === "tool" && tool.progress).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ n })));
    const reads = requests.filter((r) => r.includes("/events"));
    // The turn took ~1 s: a 20 ms poll would have asked ~50 times.
    expect(reads).toEqual([`text/event-stream GET /sessions/${session.id}/events?after=0`]);
  });

  it("polls instead when the server answers without a stream", async () => {
    const api = createApi({ basePath: server.url, headers });
    const { session } = await api.createSession({ agentId: "counter@development" });
    const requests: string[] = [];
    // A proxy that turns the stream request into a plain one: JSON comes back.
    const c = client({
      sessionId: session.id,
      pollIntervalMs: 20,
      fetch: recording(requests, (init) => ({
        ...init,
        headers: { ...(init.headers as Record<string, string>), accept: "application/json" },
      })),
    });
    await c.send("count");
    const done = await until(c, (s) => s.messages.at(-1)?.text === "Counted." && !s.isRunning);
    expect(done.error).toBeNull();
    const reads = requests.filter((r) => r.includes("/events"));
    expect(reads[0]).toBe(`text/event-stream GET /sessions/${session.id}/events?after=0`);
    expect(reads.slice(1).every((r) => r.startsWith("application/json GET"))).toBe(true);
    expect(reads.length).toBeGreaterThan(3);
  });

  it("reports a refused stream with the API's code, and dispose closes an open one", async () => {
    const refused = client({ sessionId: "ses_missing" });
    const failed = await until(refused, (s) => s.error !== null);
    expect(failed.error).toMatchObject({ code: "not_found", status: 404 });
    refused.dispose();

    const api = createApi({ basePath: server.url, headers });
    const { session } = await api.createSession({ agentId: "counter@development" });
    // Streams open; one is closed when the client cancels its body or aborts its request.
    let open = 0;
    const c = client({
      sessionId: session.id,
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if (!response.headers.get("content-type")?.includes("text/event-stream")) return response;
        const reader = response.body!.getReader();
        open++;
        let counted = true;
        const closed = () => {
          if (counted) open--;
          counted = false;
        };
        const body = new ReadableStream<Uint8Array>({
          pull: async (controller) => {
            try {
              const next = await reader.read();
              if (next.done) controller.close();
              else controller.enqueue(next.value);
            } catch (error) {
              if (init?.signal?.aborted) closed();
              throw error;
            }
          },
          cancel: (reason) => {
            closed();
            return reader.cancel(reason);
          },
        });
        return new Response(body, response);
      },
    });
    const settle = async (want: number) => {
      for (let i = 0; i < 200 && open !== want; i++) await new Promise((r) => setTimeout(r, 10));
      return open;
    };
    await until(c, (s) => s.session !== null);
    expect(open).toBe(1);
    // What React StrictMode does to an effect: stop and start again at once.
    c.dispose();
    c.start();
    await new Promise((r) => setTimeout(r, 200));
    expect(await settle(1)).toBe(1);
    c.dispose();
    expect(await settle(0)).toBe(0);
  });
});

/** `body`, failing its next read once `broken()` says so. */
function breakable(body: ReadableStream<Uint8Array>, broken: () => boolean) {
  const reader = body.getReader();
  let pending: ReturnType<typeof reader.read> | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (broken()) {
          await reader.cancel();
          controller.error(new TypeError("network connection lost"));
          return;
        }
        // Heartbeats are seconds apart: look at `broken` at least every 20 ms meanwhile,
        // keeping the read in flight (a second read would queue behind it).
        pending ??= reader.read();
        const next = await Promise.race([
          pending,
          new Promise<null>((resolve) => setTimeout(() => resolve(null), 20)),
        ]);
        if (next === null) continue;
        pending = null;
        if (next.done) return controller.close();
        controller.enqueue(next.value);
        return;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
