import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Loose, startServer, type TestServer } from "./helpers.ts";

const report = defineTool({
  name: "report",
  description: "Report the checked URL and its status",
  input: { type: "object", properties: { url: {}, status: {} } },
  output: {
    type: "object",
    properties: { url: { type: "string" }, status: { type: "integer" } },
    required: ["url", "status"],
    additionalProperties: false,
  },
  result: true,
  run: ({ input }) => ({ ...input }),
});

function checker() {
  useModel("script/test");
  useTool(report);
  return "Report what you found.";
}

let s: TestServer;
beforeAll(async () => {
  s = await startServer({
    agents: { checker },
    steps: [
      { toolCalls: [{ name: "report", input: { url: "https://a.example", status: 200 } }] },
      { text: "done" },
      { text: "second turn" },
      { text: "third turn" },
    ],
  });
});
afterAll(async () => {
  expect(s.errors).toEqual([]);
  await s.close();
});

const create = async (body: unknown, key?: string) => {
  const res = await s.call("POST", "/sessions", {
    body,
    ...(key ? { headers: { "idempotency-key": key } } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, Loose> };
};

const runTurn = async (sessionId: string, text: string) => {
  const res = await s.call("POST", `/sessions/${sessionId}/turns`, { body: { input: { text } } });
  expect(res.status).toBe(202);
  const { turnId } = (await res.json()) as { turnId: string };
  await s.runtime.sessions.waitForTurn(sessionId, turnId, { timeoutMs: 10_000 });
  return turnId;
};

describe("POST /sessions", () => {
  it("creates a session (201) and returns the compact shape", async () => {
    const { status, body } = await create({
      agentId: "checker@development",
      labels: { team: "a" },
    });
    expect(status).toBe(201);
    expect(body).toEqual({
      session: {
        id: expect.stringMatching(/^ses/),
        executionMode: "default",
        status: "new",
        createdAt: expect.any(String),
      },
      deployment: { id: "static" },
    });
  });

  it("replays the same Idempotency-Key with 200 and the same session", async () => {
    const first = await create({ agentId: "checker", labels: { a: "1" } }, "key-1");
    const again = await create({ agentId: "checker", labels: { a: "1" } }, "key-1");
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.session.id).toBe(first.body.session.id);
  });

  it("refuses the same key with another body: 409 idempotency_conflict", async () => {
    await create({ agentId: "checker" }, "key-2");
    const other = await create({ agentId: "checker", labels: { x: "y" } }, "key-2");
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_conflict");
  });

  it("validates the key and the body", async () => {
    expect((await create({ agentId: "checker" }, "k".repeat(257))).status).toBe(400);
    const bad = await create({ agentId: "checker", source: "nope" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid_input", path: "source" });
    const extra = await create({ agentId: "checker", color: "red" });
    expect(extra.body.error).toMatchObject({ code: "invalid_input", path: "color" });
    const missing = await create({ agentId: "nobody" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("agent_not_found");
    expect((await create([1, 2])).body.error.code).toBe("invalid_input");
    expect((await create("{not json")).body.error.code).toBe("invalid_json");
  });
});

describe("POST /sessions {data}", () => {
  it("keeps the data, shows it on GET, and a replay must repeat it", async () => {
    const data = { campaign_name: "Spring", tags: ["b2b"], approved: false };
    const first = await create({ agentId: "checker", data }, "key-data");
    expect(first.status).toBe(201);
    const id = first.body.session.id as string;
    const view = (await (await s.call("GET", `/sessions/${id}`)).json()) as Record<string, Loose>;
    expect(view.data).toEqual(data);
    expect(view.parent).toBeNull();
    expect((await create({ agentId: "checker", data }, "key-data")).status).toBe(200);
    const other = await create({ agentId: "checker", data: { tags: [] } }, "key-data");
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_conflict");
  });

  it("refuses data that is not a JSON object or is too large, naming the field", async () => {
    const list = await create({ agentId: "checker", data: [1] });
    expect(list.status).toBe(400);
    expect(list.body.error).toMatchObject({ code: "invalid_input", path: "data" });
    const big = await create({ agentId: "checker", data: { x: "y".repeat(70_000) } });
    expect(big.status).toBe(400);
    expect(big.body.error).toMatchObject({ code: "invalid_input", path: "data" });
  });
});

describe("sessions", () => {
  it("GET /sessions/<id> shows turns and the result; 404 for an unknown id", async () => {
    const { body } = await create({ agentId: "checker" });
    const id = body.session.id as string;
    const turnId = await runTurn(id, "check");
    const res = await s.call("GET", `/sessions/${id}`);
    expect(res.status).toBe(200);
    const view = (await res.json()) as Record<string, Loose>;
    expect(view).toMatchObject({ id, agentId: "checker", status: "idle", source: "api" });
    expect(view.turns.map((t: { id: string }) => t.id)).toEqual([turnId]);
    expect(view.result.data).toEqual({ url: "https://a.example", status: 200 });
    const missing = await s.call("GET", "/sessions/ses_nope");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Loose).error.code).toBe("not_found");
  });

  it("lists with filters, limit and cursor; unknown parameters are invalid_query", async () => {
    for (let i = 0; i < 3; i++) await create({ agentId: "checker", labels: { batch: "list" } });
    const page1 = await s.call("GET", "/sessions?label.batch=list&limit=2&agent=checker");
    expect(page1.status).toBe(200);
    const p1 = (await page1.json()) as { sessions: Loose[]; nextCursor: string };
    expect(p1.sessions).toHaveLength(2);
    expect(p1.sessions[0].activity).toBeDefined();
    expect(p1.sessions[0].turns).toBeUndefined();
    const page2 = await s.call(
      "GET",
      `/sessions?label.batch=list&limit=2&cursor=${encodeURIComponent(p1.nextCursor)}`,
    );
    const p2 = (await page2.json()) as { sessions: Loose[]; nextCursor: string | null };
    expect(p2.sessions).toHaveLength(1);
    expect(p2.nextCursor).toBeNull();
    const ids = [...p1.sessions, ...p2.sessions].map((x) => x.id);
    expect(new Set(ids).size).toBe(3);
    const news = (await (await s.call("GET", "/sessions?status=new&limit=100")).json()) as Loose;
    expect(news.sessions.every((x: Loose) => x.status === "new")).toBe(true);
    for (const q of [
      "colour=red",
      "limit=0",
      "limit=101",
      "limit=x",
      "status=sleepy",
      "cursor=zz",
      "limit=1&limit=2",
      "label.Bad=1",
    ]) {
      const res = await s.call("GET", `/sessions?${q}`);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as Loose).error.code, q).toBe("invalid_query");
    }
  });

  it("ends a session (twice is a no-op); a turn after that is 409 session_ended", async () => {
    const { body } = await create({ agentId: "checker" });
    const id = body.session.id as string;
    const end = await s.call("POST", `/sessions/${id}/end`);
    expect(end.status).toBe(200);
    expect(((await end.json()) as Loose).session.status).toBe("ended");
    expect((await s.call("POST", `/sessions/${id}/end`)).status).toBe(200);
    const turn = await s.call("POST", `/sessions/${id}/turns`, { body: { input: { text: "hi" } } });
    expect(turn.status).toBe(409);
    expect(((await turn.json()) as Loose).error.code).toBe("session_ended");
    expect((await s.call("POST", "/sessions/ses_nope/end")).status).toBe(404);
  });

  it("interrupt on an idle session does nothing", async () => {
    const { body } = await create({ agentId: "checker" });
    const res = await s.call("POST", `/sessions/${body.session.id}/interrupt`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ interruptedTurnIds: [] });
    expect((await s.call("POST", "/sessions/ses_nope/interrupt")).status).toBe(404);
  });
});

describe("turns", () => {
  it("202 for a new turn, 200 duplicate for the same idempotencyKey; validates input", async () => {
    const { body } = await create({ agentId: "checker" });
    const id = body.session.id as string;
    const send = (b: unknown) => s.call("POST", `/sessions/${id}/turns`, { body: b });
    const first = await send({ input: { text: "go" }, idempotencyKey: "t1" });
    expect(first.status).toBe(202);
    const a = (await first.json()) as Loose;
    // Nothing is ahead of it on a new session, so it starts in the write that takes it.
    expect(a).toMatchObject({ turnId: expect.any(String), status: "running", duplicate: false });
    const again = await send({ input: { text: "go" }, idempotencyKey: "t1" });
    expect(again.status).toBe(200);
    expect(((await again.json()) as Loose).turnId).toBe(a.turnId);
    for (const bad of [
      {},
      { input: "" },
      { input: 7 },
      { input: { colour: 1 } },
      { input: {}, mode: "x" },
      { input: {}, extra: 1 },
    ]) {
      const res = await send(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(((await res.json()) as Loose).error.code).toBe("invalid_input");
    }
    await s.runtime.sessions.waitForTurn(id, a.turnId, { timeoutMs: 10_000 });
    const unknown = await s.call("POST", "/sessions/ses_nope/turns", {
      body: { input: { text: "x" } },
    });
    expect(unknown.status).toBe(404);
  });
});

describe("results and events", () => {
  it("lists results per session and per turn, and fetches one", async () => {
    const { body } = await create({ agentId: "checker" });
    const id = body.session.id as string;
    const turnId = await runTurn(id, "check");
    const list = (await (await s.call("GET", `/sessions/${id}/results`)).json()) as Loose;
    expect(list.results).toHaveLength(1);
    expect(list.nextCursor).toBeNull();
    const record = list.results[0];
    expect(record).toMatchObject({
      sessionId: id,
      turnId,
      data: { url: "https://a.example", status: 200 },
    });
    const perTurn = (await (
      await s.call("GET", `/sessions/${id}/turns/${turnId}/results?limit=200`)
    ).json()) as Loose;
    expect(perTurn.results).toEqual(list.results);
    const one = await s.call("GET", `/sessions/${id}/results/${record.resultId}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(record);
    expect((await s.call("GET", `/sessions/${id}/results/res_nope`)).status).toBe(404);
    expect((await s.call("GET", `/sessions/${id}/turns/turn_nope/results`)).status).toBe(404);
    expect((await s.call("GET", `/sessions/${id}/results?limit=201`)).status).toBe(400);
    expect((await s.call("GET", "/sessions/ses_nope/results")).status).toBe(404);
  });

  it("pages events with ?after=", async () => {
    const { body } = await create({ agentId: "checker" });
    const id = body.session.id as string;
    await runTurn(id, "check");
    const all = ((await (await s.call("GET", `/sessions/${id}/events`)).json()) as Loose).events;
    expect(all.map((e: Loose) => e.seq)).toEqual(all.map((_: unknown, i: number) => i + 1));
    expect(all[0].type).toBe("session.created");
    const rest = ((await (await s.call("GET", `/sessions/${id}/events?after=3`)).json()) as Loose)
      .events;
    expect(rest).toEqual(all.slice(3));
    expect((await s.call("GET", `/sessions/${id}/events?after=-1`)).status).toBe(400);
    expect((await s.call("GET", `/sessions/${id}/events?since=1`)).status).toBe(400);
    expect((await s.call("GET", "/sessions/ses_nope/events")).status).toBe(404);
  });
});
