import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import { type Loose, startServer, type TestServer } from "./helpers.ts";

const applied: unknown[] = [];
const attach = defineTool({
  name: "attach",
  description: "Move a customer onto a plan",
  input: {
    type: "object",
    properties: { customerId: { type: "string" } },
    required: ["customerId"],
  },
  preview: ({ input }) => ({ title: `Move ${String(input.customerId)}` }),
  apply: ({ input, decision }) => {
    applied.push(input);
    return { done: true, key: decision.id };
  },
});
function agent() {
  useModel("script/test");
  useTool(attach);
  return "Propose plan changes.";
}

let s: TestServer;
afterEach(async () => {
  applied.length = 0;
  await s?.close();
});

describe("approvals over HTTP", () => {
  it("lists a session's approvals, decides once (409 after), and shows the outcome", async () => {
    s = await startServer({
      agents: { agent },
      steps: [
        { toolCalls: [{ name: "attach", input: { customerId: "c1" } }] },
        { text: "awaiting approval" },
      ],
    });
    const created: Loose = await (
      await s.call("POST", "/sessions", { body: { agentId: "agent" } })
    ).json();
    const sessionId = created.session.id;
    const turn: Loose = await (
      await s.call("POST", `/sessions/${sessionId}/turns`, { body: { input: { text: "move c1" } } })
    ).json();
    await s.runtime.sessions.waitForTurn(sessionId, turn.turnId);
    const list: Loose = await (await s.call("GET", `/sessions/${sessionId}/approvals`)).json();
    expect(list.approvals).toHaveLength(1);
    const id = list.approvals[0].id;
    expect(
      ((await (await s.call("GET", `/approvals/${id}`)).json()) as Loose).approval.status,
    ).toBe("pending");
    const bad = await s.call("POST", `/approvals/${id}/decision`, { body: { decision: "yes" } });
    expect(bad.status).toBe(400);
    const ok = await s.call("POST", `/approvals/${id}/decision`, {
      body: { decision: "approve", decidedBy: "ana" },
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Loose).approval).toMatchObject({
      status: "applied",
      outcome: { done: true },
    });
    const again = await s.call("POST", `/approvals/${id}/decision`, { body: { decision: "deny" } });
    expect(again.status).toBe(409);
    expect(((await again.json()) as Loose).error.code).toBe("approval_decided");
    expect(applied).toEqual([{ customerId: "c1" }]);
    expect((await s.call("POST", `/approvals/${id}/retry`)).status).toBe(409);
    expect((await s.call("GET", "/approvals/apr_missing")).status).toBe(404);
  });

  it("PATCH /sessions/<id>/labels sets and unsets, naming the field at fault", async () => {
    s = await startServer({ agents: { agent } });
    const created: Loose = await (
      await s.call("POST", "/sessions", { body: { agentId: "agent", labels: { team: "red" } } })
    ).json();
    const id = created.session.id;
    const res = await s.call("PATCH", `/sessions/${id}/labels`, {
      body: { set: { env: "prod" }, unset: ["team"] },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Loose).session.labels).toEqual({ env: "prod" });
    const bad = await s.call("PATCH", `/sessions/${id}/labels`, { body: { set: { Env: "x" } } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Loose).error.path).toBe("set.Env");
    expect((await s.call("PATCH", `/sessions/${id}/labels`, { body: { sett: {} } })).status).toBe(
      400,
    );
  });
});
