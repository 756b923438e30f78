// biome-ignore-all lint/correctness/useHookAtTopLevel: OpenComputer agent hooks, not React hooks
import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Loose, startServer, type TestServer } from "./helpers.ts";

// What a session list row tells a person who has to act: whether the session waits for them
// (`waitingFor`), its first message, and the `waiting=true` filter.

const attach = defineTool({
  name: "attach",
  description: "Move a customer onto a plan",
  input: { type: "object", properties: { customerId: { type: "string" } } },
  preview: ({ input }) => ({ title: `Move ${String(input.customerId)}` }),
  apply: () => ({ done: true }),
});

function approver() {
  useModel("script/test");
  useTool(attach);
  return "Propose plan changes.";
}

function asker() {
  useModel("script/test");
  useTool("ask");
  return "Ask first.";
}

let s: TestServer;
let q: TestServer;
beforeAll(async () => {
  // The scripted model plays one script per server: one server per agent.
  s = await startServer({
    agents: { approver },
    steps: [{ toolCalls: [{ name: "attach", input: { customerId: "c1" } }] }, { text: "noted" }],
  });
  q = await startServer({
    agents: { asker },
    steps: [
      {
        toolCalls: [
          {
            name: "ask",
            input: { text: "Which plan?", options: [{ label: "Pro", value: "pro" }] },
          },
        ],
      },
      { text: "noted" },
    ],
  });
});
afterAll(async () => {
  expect([...s.errors, ...q.errors]).toEqual([]);
  await s.close();
  await q.close();
});

async function sessionWith(agentId: string, text?: string, on = s): Promise<string> {
  const created: Loose = await (await on.call("POST", "/sessions", { body: { agentId } })).json();
  const id = created.session.id as string;
  if (text !== undefined) {
    const res = await on.call("POST", `/sessions/${id}/turns`, { body: { input: { text } } });
    const { turnId } = (await res.json()) as Loose;
    await on.runtime.sessions.waitForTurn(id, turnId, { timeoutMs: 10_000 });
  }
  return id;
}

const row = async (id: string, query = "", on = s): Promise<Loose> => {
  const page: Loose = await (await on.call("GET", `/sessions?limit=100${query}`)).json();
  return page.sessions.find((x: Loose) => x.id === id);
};

describe("GET /sessions rows for people who act", () => {
  it("says what a session waits for, shows its first message, and filters on waiting=true", async () => {
    const fresh = await sessionWith("approver");
    expect(await row(fresh)).toMatchObject({ waitingFor: null, firstMessage: null });

    const approving = await sessionWith("approver", "Move c1 please");
    const a = await row(approving);
    // `idle` by status, yet a person has to decide: the row says so.
    expect(a).toMatchObject({ status: "idle", waitingFor: "approval" });
    expect(a.firstMessage).toBe("Move c1 please");

    const waiting: Loose = await (await s.call("GET", "/sessions?waiting=true")).json();
    const ids = waiting.sessions.map((x: Loose) => x.id);
    expect(ids).toContain(approving);
    expect(ids).not.toContain(fresh);
    expect(waiting.sessions.every((x: Loose) => x.waitingFor !== null)).toBe(true);

    // Deciding it: no longer waiting, and out of the filter.
    const { approvals }: Loose = await (
      await s.call("GET", `/sessions/${approving}/approvals`)
    ).json();
    const decided = await s.call("POST", `/approvals/${approvals[0].id}/decision`, {
      body: { decision: "deny" },
    });
    expect(decided.status).toBe(200);
    expect((await row(approving)).waitingFor).toBeNull();
    expect(await row(approving, "&waiting=true")).toBeUndefined();
    // A later message does not replace the first one.
    const res = await s.call("POST", `/sessions/${approving}/turns`, {
      body: { input: { text: "and another" } },
    });
    expect(res.status).toBe(202);
    expect((await row(approving)).firstMessage).toBe("Move c1 please");
  });

  it("an open question is waitingFor answer; an answer clears it", async () => {
    const id = await sessionWith("asker", "Change my plan", q);
    expect(await row(id, "&waiting=true", q)).toMatchObject({ waitingFor: "answer" });
    const session: Loose = await (await q.call("GET", `/sessions/${id}`)).json();
    const res = await q.call("POST", `/sessions/${id}/turns`, {
      body: { input: { answer: { questionId: session.question.id, value: "pro" } } },
    });
    const { turnId } = (await res.json()) as Loose;
    await q.runtime.sessions.waitForTurn(id, turnId, { timeoutMs: 10_000 });
    expect((await row(id, "", q)).waitingFor).toBeNull();
  });

  it("refuses a waiting value other than true or false", async () => {
    const res = await s.call("GET", "/sessions?waiting=yes");
    expect(res.status).toBe(400);
    expect(((await res.json()) as Loose).error).toMatchObject({
      code: "invalid_query",
      path: "waiting",
    });
  });
});
