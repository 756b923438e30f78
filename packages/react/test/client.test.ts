import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createApi } from "../src/api.ts";
import { AgentClient, type AgentSnapshot } from "../src/client.ts";
import type { SessionEvent } from "../src/types.ts";
import { applied } from "./fixtures/agents.ts";
import { type FixtureServer, KEY, startFixtureServer } from "./fixtures/server.ts";

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

function client(options: Partial<ConstructorParameters<typeof AgentClient>[0]>): AgentClient {
  const c = new AgentClient({ basePath: server.url, headers, pollIntervalMs: 100, ...options });
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

describe("AgentClient against a real server", () => {
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

  it("a failing poll sets `error`, backs off, and resumes from the same cursor without a gap or repeat", async () => {
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
        return fetch(url, init);
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
    // It only ever polled, posted the turn and read the session: it never ended it.
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
