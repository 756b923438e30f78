// Every record the API returns is checked against @opencomputer/protocol, field by field: a
// response that grows an undeclared field or loses one fails here, not in a client.

import { defineTool, useModel, useTool } from "@opencomputer/agent";
import {
  approvalViewShape,
  check,
  eventIssues,
  resultRecordShape,
  type Shape,
  sessionListRowShape,
  sessionViewShape,
} from "@opencomputer/protocol";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Loose, startServer, type TestServer } from "./helpers.ts";

const report = defineTool({
  name: "report",
  description: "Report a status",
  input: { type: "object", properties: { status: { type: "integer" } } },
  output: {
    type: "object",
    properties: { status: { type: "integer" } },
    required: ["status"],
    additionalProperties: false,
  },
  result: true,
  run: ({ input }) => ({ status: Number(input.status) }),
});
const attach = defineTool({
  name: "attach",
  description: "Move a customer onto a plan",
  input: { type: "object", properties: { customerId: { type: "string" } } },
  preview: ({ input }) => ({
    title: `Move ${String(input.customerId)}`,
    facts: [{ label: "Plan", value: "pro" }],
  }),
  apply: ({ decision }) => ({ key: decision.id }),
});
function agent() {
  useModel("script/test");
  useTool(report);
  useTool(attach);
  useTool("ask");
  return "Report, propose, then ask.";
}

let s: TestServer;
let sessionId = "";
beforeAll(async () => {
  s = await startServer({
    agents: { agent },
    steps: [
      {
        toolCalls: [
          { name: "report", input: { status: 200 } },
          { name: "attach", input: { customerId: "c1" } },
        ],
      },
      {
        toolCalls: [
          { name: "ask", input: { text: "Go on?", options: [{ label: "Yes", value: "y" }] } },
        ],
      },
    ],
  });
  const created: Loose = await (
    await s.call("POST", "/sessions", { body: { agentId: "agent", labels: { team: "a" } } })
  ).json();
  sessionId = created.session.id;
  const turn: Loose = await (
    await s.call("POST", `/sessions/${sessionId}/turns`, { body: { input: { text: "go" } } })
  ).json();
  await s.runtime.sessions.waitForTurn(sessionId, turn.turnId, { timeoutMs: 10_000 });
});
afterAll(async () => {
  await s.close();
});

async function get(path: string): Promise<Loose> {
  const res = await s.call("GET", path);
  expect(res.status).toBe(200);
  return res.json();
}

function conforms(shape: Shape<unknown>, value: unknown): void {
  expect(check(shape, value)).toEqual([]);
}

it("GET /sessions/<id> is a protocol Session, with its open question and result", async () => {
  const session = await get(`/sessions/${sessionId}`);
  expect(session.question?.text).toBe("Go on?");
  expect(session.result?.data).toEqual({ status: 200 });
  conforms(sessionViewShape, session);
});

it("GET /sessions rows are protocol list rows", async () => {
  const { sessions } = await get("/sessions");
  expect(sessions.length).toBeGreaterThan(0);
  for (const row of sessions) conforms(sessionListRowShape, row);
});

it("approvals, before and after a decision, are protocol Approvals", async () => {
  const { approvals } = await get(`/sessions/${sessionId}/approvals`);
  expect(approvals).toHaveLength(1);
  conforms(approvalViewShape, approvals[0]);
  const decided: Loose = await (
    await s.call("POST", `/approvals/${approvals[0].id}/decision`, {
      body: { decision: "approve" },
    })
  ).json();
  expect(decided.approval.status).toBe("applied");
  conforms(approvalViewShape, decided.approval);
});

it("result records and every event are the protocol's", async () => {
  const { results } = await get(`/sessions/${sessionId}/results`);
  expect(results).toHaveLength(1);
  conforms(resultRecordShape, results[0]);
  const { events } = await get(`/sessions/${sessionId}/events`);
  const types = new Set(events.map((e: { type: string }) => e.type));
  for (const type of [
    "question.asked",
    "approval.requested",
    "approval.applied",
    "tool.completed",
  ]) {
    expect(types).toContain(type);
  }
  for (const event of events) expect(eventIssues(event)).toEqual([]);
});
