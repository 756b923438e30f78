// `GET /usage` over the real stack (SQLite, scripted model), and `POST /sessions {budget}`.
import { defineTool, useTool } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import { type Loose, startServer, type TestServer } from "./helpers.ts";

const lookup = defineTool({
  name: "lookup",
  description: "Look something up",
  input: { type: "object", properties: {} },
  run: () => ({ found: true }),
});
function support() {
  useTool(lookup);
  return "Answer.";
}
function billing() {
  useTool(lookup);
  return "Bill.";
}

let s: TestServer;
afterEach(async () => s?.close());

async function runTurn(s: TestServer, sessionId: string) {
  const sent: Loose = await (
    await s.call("POST", `/sessions/${sessionId}/turns`, { body: { input: "go" } })
  ).json();
  return s.runtime.sessions.waitForTurn(sessionId, sent.turnId, { timeoutMs: 20_000 });
}

async function session(s: TestServer, body: Record<string, unknown>) {
  const response = await s.call("POST", "/sessions", { body });
  expect(response.status).toBe(201);
  return ((await response.json()) as Loose).session.id as string;
}

describe("GET /usage", () => {
  it("rolls up the project's steps per label value, agent and session", async () => {
    s = await startServer({
      agents: { support, billing },
      steps: [
        {
          toolCalls: [{ name: "lookup", input: {} }],
          usage: { inputTokens: 100, outputTokens: 10 },
        },
        { text: "found", usage: { inputTokens: 120, outputTokens: 20 } },
      ],
    });
    const acme = await session(s, { agentId: "support", labels: { customer: "acme" } });
    await runTurn(s, acme);
    // Each session plays the script from its start: two steps.
    const plain = await session(s, { agentId: "billing" });
    await runTurn(s, plain);

    const byCustomer: Loose = await (await s.call("GET", "/usage?groupBy=label.customer")).json();
    expect(byCustomer.groupBy).toBe("label.customer");
    expect(byCustomer.total).toEqual({
      steps: 4,
      inputTokens: 440,
      outputTokens: 60,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0,
      unpricedSteps: 0,
    });
    expect(byCustomer.groups.map((g: Loose) => [g.key, g.steps, g.inputTokens])).toEqual([
      ["acme", 2, 220],
      [null, 2, 220],
    ]);
    // The platform's project-scoped path answers the same.
    const byAgent: Loose = await (
      await s.call("GET", "/api/managed-agents/projects/default/usage?groupBy=agent")
    ).json();
    expect(byAgent.groups.map((g: Loose) => [g.key, g.outputTokens])).toEqual([
      ["billing", 30],
      ["support", 30],
    ]);
    const bySession: Loose = await (await s.call("GET", "/usage?groupBy=session")).json();
    expect(bySession.groups).toHaveLength(2);
    // A window that ends before the steps has none.
    const before: Loose = await (
      await s.call("GET", "/usage?from=2020-01-01&to=2020-02-01")
    ).json();
    expect(before).toMatchObject({
      from: "2020-01-01T00:00:00.000Z",
      to: "2020-02-01T00:00:00.000Z",
      total: { steps: 0 },
      groups: [],
    });
  });

  it("names the query field at fault", async () => {
    s = await startServer({ agents: { support } });
    const cases: Array<[string, string]> = [
      ["from=yesterday", "from"],
      ["to=2026-13-45", "to"],
      ["to=2026-01-01T10:00:00", "to"],
      ["groupBy=model", "groupBy"],
      ["groupBy=label.Customer", "groupBy"],
      ["from=2026-02-01&to=2026-01-01", "from"],
      ["from=2020-01-01&to=2026-01-01", "from"],
      ["group=agent", "group"],
    ];
    for (const [query, path] of cases) {
      const response = await s.call("GET", `/usage?${query}`);
      expect(response.status, query).toBe(400);
      const body: Loose = await response.json();
      expect(body.error, query).toMatchObject({ code: "invalid_query", path });
    }
  });
});

describe("POST /sessions {budget}", () => {
  it("keeps the budget on the session and refuses a malformed one", async () => {
    s = await startServer({ agents: { support } });
    const id = await session(s, { agentId: "support", budget: { maxCostUsd: 2.5 } });
    const view: Loose = await (await s.call("GET", `/sessions/${id}`)).json();
    expect(view.budget).toEqual({ maxCostUsd: 2.5 });
    const bad = await s.call("POST", "/sessions", {
      body: { agentId: "support", budget: { maxTokens: 0 } },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Loose).error).toMatchObject({
      code: "invalid_input",
      path: "budget.maxTokens",
    });
  });
});
