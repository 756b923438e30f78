// Subagents in both execution modes (agents in fixtures/subagent-agents.ts): a delegation runs
// one child session linked to the parent's call, and the call completes with the child's answer;
// a child's question or approval is told to the parent's watchers and deciding it resumes the
// same child; interrupting or ending the parent cancels the child.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EventRecord } from "@opencomputer/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/subagent-agents.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Waits until the session's log holds an event of `type`. */
async function eventually(sessionId: string, type: string): Promise<EventRecord> {
  for (let i = 0; i < 400; i++) {
    const found = (await h.events(sessionId)).find((e) => e.type === type);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no ${type} in ${sessionId}`);
}

describe.each(EXECUTIONS)("subagents (%s)", (execution) => {
  const start = () =>
    harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, model: "" });

  it("a delegation runs one linked child session and completes with its final text", async () => {
    h = await start();
    h.script("planner", [
      { toolCalls: [{ name: "subagent_researcher", input: { task: "Who buys standing desks?" } }] },
      { text: "Plan: target remote developers." },
    ]);
    h.script("researcher", [{ text: "Remote developers, 25-40." }]);
    const { sessionId, turnId, events } = await h.run("research the audience", "planner");
    expect(ofType(events, "turn.completed")).toHaveLength(1);
    const rendered = ofType(events, "agent.rendered")[0]!;
    expect(rendered.data.enabledSubagents).toEqual(["researcher"]);
    const call = ofType(events, "tool.started")[0]!.data;
    expect(call.tool).toBe("subagent_researcher");
    const started = ofType(events, "subagent.started");
    expect(started).toHaveLength(1);
    const child = started[0]!.data.sessionId as string;
    expect(started[0]!.data).toMatchObject({ callId: call.callId, agentId: "researcher" });
    const completed = ofType(events, "tool.completed")[0]!.data;
    expect(completed.output).toEqual({
      agentId: "researcher",
      sessionId: child,
      text: "Remote developers, 25-40.",
    });
    expect(ofType(events, "subagent.completed")[0]!.data).toEqual({
      callId: call.callId,
      agentId: "researcher",
      sessionId: child,
    });
    const view = await h.runtime.sessions.get(child);
    expect(view.agentId).toBe("researcher");
    expect(view.parent).toEqual({
      sessionId,
      turnId,
      callId: call.callId,
      agentId: "planner",
      depth: 1,
    });
    expect(view.turns).toHaveLength(1);
    expect(view.turns[0]!.input).toEqual({ source: "subagent", text: "Who buys standing desks?" });
    const childEvents = await h.events(child);
    expect(ofType(childEvents, "session.created")[0]!.data.parent).toEqual(view.parent);
    expect(ofType(childEvents, "agent.rendered")[0]!.data.instructions).toBe(
      "Complete only the delegated research task and return concise findings.",
    );
    // One child per call: the project has exactly the two sessions.
    expect((await h.runtime.sessions.list()).sessions).toHaveLength(2);
  });

  it("is conditional: without the word the planner offers no delegation tool", async () => {
    h = await start();
    h.script("planner", [
      { toolCalls: [{ name: "subagent_researcher", input: { task: "x" } }] },
      { text: "ok" },
    ]);
    const { events } = await h.run("just plan", "planner");
    expect(ofType(events, "agent.rendered")[0]!.data).not.toHaveProperty("enabledSubagents");
    expect(ofType(events, "tool.failed")[0]!.data.message).toMatch(
      /Unknown tool "subagent_researcher"/,
    );
    expect((await h.runtime.sessions.list()).sessions).toHaveLength(1);
  });

  it("answers with the child's result record when it reports one", async () => {
    h = await start();
    h.script("lead", [
      { toolCalls: [{ name: "subagent_analyst", input: { task: "Size the market" } }] },
      { text: "done" },
    ]);
    h.script("analyst", [
      { toolCalls: [{ name: "findings", input: { audience: "SMBs" } }] },
      { text: "Reported." },
    ]);
    const { events } = await h.run("go", "lead");
    const output = ofType(events, "tool.completed")[0]!.data.output as Record<string, unknown>;
    expect(output).toMatchObject({
      agentId: "analyst",
      text: "Reported.",
      result: { audience: "SMBs" },
    });
  });

  it("a child's question reaches the parent's log; the answer resumes the same child", async () => {
    h = await start();
    h.script("manager", [
      { toolCalls: [{ name: "subagent_clarifier", input: { task: "Write the brief" } }] },
      { text: "Brief delegated and done." },
    ]);
    h.script("clarifier", [
      {
        toolCalls: [
          {
            name: "ask",
            input: { text: "Which region?", options: [{ label: "EU", value: "eu" }] },
          },
        ],
      },
      { text: "Brief for the EU." },
    ]);
    const { session } = await h.runtime.sessions.create({ agentId: "manager" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    const waiting = await eventually(session.id, "subagent.waiting");
    expect(waiting.data).toMatchObject({ reason: "question", text: "Which region?" });
    const data = waiting.data as { sessionId: string; questionId: string };
    expect((await h.runtime.sessions.get(session.id)).status).toBe("running");
    await h.runtime.sessions.sendTurn(data.sessionId, {
      answer: { questionId: data.questionId, value: "eu" },
    });
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("completed");
    const events = await h.events(session.id);
    expect(ofType(events, "tool.completed")[0]!.data.output).toMatchObject({
      text: "Brief for the EU.",
    });
    expect(ofType(events, "subagent.started")).toHaveLength(1);
    expect(ofType(events, "tool.started")).toHaveLength(1);
    // The same child went on: its conversation has the question's turn and the answer's.
    const child = await h.runtime.sessions.get(data.sessionId);
    expect(child.turns.map((t) => t.input.source)).toEqual(["subagent", "user"]);
    expect((await h.runtime.sessions.list()).sessions).toHaveLength(2);
  });

  it("a child's approval reaches the parent's log; approving applies once and answers", async () => {
    h = await start();
    const log = join(h.dir, "applied.log");
    writeFileSync(log, "");
    h.script("director", [
      { toolCalls: [{ name: "subagent_publisher", input: { task: "Publish it" } }] },
      { text: "Published through the publisher." },
    ]);
    h.script("publisher", [
      { toolCalls: [{ name: "publish", input: { log } }] },
      { text: "Awaiting approval." },
    ]);
    const { session } = await h.runtime.sessions.create({ agentId: "director" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    const waiting = await eventually(session.id, "subagent.waiting");
    expect(waiting.data).toMatchObject({
      reason: "approval",
      tool: "publish",
      card: { title: "Publish the campaign" },
    });
    const { approvalId } = waiting.data as { approvalId: string };
    const decided = await h.runtime.approvals.decide(approvalId, { decision: "approve" });
    expect(decided.status).toBe("applied");
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("completed");
    const output = ofType(await h.events(session.id), "tool.completed")[0]!.data.output;
    expect(output).toMatchObject({
      approvals: [{ approvalId, tool: "publish", status: "applied" }],
    });
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual([decided.decision!.id]);
  });

  it("interrupting the parent cancels the child; ending it ends the child", async () => {
    h = await start();
    h.script("manager", [
      { toolCalls: [{ name: "subagent_clarifier", input: { task: "Write the brief" } }] },
      { text: "never" },
    ]);
    h.script("clarifier", [{ delayMs: 60_000, text: "too late" }]);
    const { session } = await h.runtime.sessions.create({ agentId: "manager" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    const started = await eventually(session.id, "subagent.started");
    const child = (started.data as { sessionId: string }).sessionId;
    await eventually(child, "turn.started");
    await h.runtime.sessions.interrupt(session.id);
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("cancelled");
    const childTurn = (await h.runtime.sessions.get(child)).turns[0]!;
    expect(childTurn.status).toBe("cancelled");
    await h.runtime.sessions.end(session.id);
    expect((await h.runtime.sessions.get(child)).status).toBe("ended");
  });

  it("agents that delegate to each other in a cycle stop at the depth limit", async () => {
    h = await start();
    h.script("ping", [
      { toolCalls: [{ name: "subagent_pong", input: { task: "pong" } }] },
      { text: "ping done" },
    ]);
    h.script("pong", [
      { toolCalls: [{ name: "subagent_ping", input: { task: "ping" } }] },
      { text: "pong done" },
    ]);
    const { sessionId, events } = await h.run("go", "ping");
    expect(ofType(events, "turn.completed")).toHaveLength(1);
    const { sessions } = await h.runtime.sessions.list();
    // The root and four nested children; the fourth child's call is refused.
    expect(sessions).toHaveLength(5);
    const depths = await Promise.all(
      sessions.map(async (s) => (await h.runtime.sessions.get(s.id)).parent?.depth ?? 0),
    );
    expect([...depths].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(sessions[depths.indexOf(0)]!.id).toBe(sessionId);
    const last = sessions[depths.indexOf(4)]!;
    const failed = ofType(await h.events(last.id), "tool.failed")[0]!.data;
    expect(failed.message).toMatch(/nest at most 4 deep/);
  });
});
