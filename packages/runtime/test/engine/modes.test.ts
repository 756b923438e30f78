// The engine's behaviour with agent code, run twice: in the runtime's process and in worker
// processes. Same agents (a module both can load), same scripts, same expectations.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  EXECUTIONS,
  type Harness,
  harness,
  ofType,
  TEST_WORKERS,
  types,
  until,
} from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-agents.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe.each(EXECUTIONS)("agent code %s", (execution) => {
  const start = (steps: Parameters<typeof harness>[0]["steps"], extra = {}) =>
    harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, steps, ...extra });

  it("runs model step → tool → model step with progress and the call's context", async () => {
    h = await start([
      { text: "Let me look.", toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }] },
      { text: "A1 is processing." },
    ]);
    const { sessionId, events } = await h.run("Where is A1?");
    expect(types(events)).toEqual([
      "session.created",
      "message.received",
      "turn.queued",
      "turn.started",
      "session.status_changed",
      "agent.rendered",
      "message.completed",
      "usage.recorded",
      "tool.started",
      "tool.progress",
      "tool.completed",
      "agent.rendered",
      "message.completed",
      "usage.recorded",
      "turn.completed",
      "session.status_changed",
    ]);
    const started = ofType(events, "tool.started")[0]!;
    expect(ofType(events, "tool.progress")[0]!.data.metadata).toEqual({ phase: "looking" });
    const output = ofType(events, "tool.completed")[0]!.data.output as Record<string, unknown>;
    expect(output).toMatchObject({
      orderId: "A1",
      status: "processing",
      sessionId,
      toolCallId: started.data.callId,
    });
    // The proof of where it ran.
    if (execution === "worker") expect(output.pid).not.toBe(process.pid);
    else expect(output.pid).toBe(process.pid);
    const rendered = ofType(events, "agent.rendered")[0]!.data;
    expect(rendered.enabledTools).toContain("lookup_order");
    expect(rendered.instructions).toBe("Help customers. (Where is A1?)");
    expect(ofType(events, "turn.completed")).toHaveLength(1);
  });

  it("turns a throw, a non-JSON output and non-JSON progress into failed calls the model sees", async () => {
    h = await start([
      {
        toolCalls: [
          { name: "explode", input: {} },
          { name: "date_out", input: {} },
          { name: "bad_progress", input: {} },
        ],
      },
      { text: "done" },
    ]);
    const { events } = await h.run("go");
    const failed = Object.fromEntries(
      ofType(events, "tool.failed").map((e) => [e.data.tool, e.data.message]),
    );
    expect(failed.explode).toBe("kaboom");
    expect(failed.date_out).toMatch(
      /^date_out returned a value that is not JSON-compatible: .*\$\.nested\.when.*toISOString/,
    );
    expect(failed.bad_progress).toMatch(
      /^bad_progress reported progress that is not JSON-compatible: .*\$\.n/,
    );
    expect(ofType(events, "turn.completed")).toHaveLength(1);
  });

  it("aborts the running tool's signal on interrupt", async () => {
    h = await start([{ toolCalls: [{ name: "wait_abort", input: { marker: "" } }] }]);
    const marker = join(h.dir, "aborted.txt");
    const running = join(h.dir, "running.txt");
    h.script("test", [{ toolCalls: [{ name: "wait_abort", input: { marker, running } }] }]);
    const { session } = await h.runtime.sessions.create({ agentId: "support" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "wait" });
    await until(() => existsSync(running));
    await h.runtime.sessions.interrupt(session.id);
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId);
    expect(turn.status).toBe("cancelled");
    await until(() => existsSync(marker));
    expect(readFileSync(marker, "utf8")).toBe("aborted: turn interrupted");
  });

  it("does not start a call whose turn is interrupted before its code starts", async () => {
    // The egress lookup is the engine's last await before it hands the call to the agent code:
    // held there, the interrupt lands after tool.started and before the tool runs.
    let reached = () => {};
    const atEgress = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running = () => join(h.dir, "running.txt");
    h = await start([], {
      egress: async () => {
        reached();
        await gate;
        return undefined;
      },
    });
    const marker = join(h.dir, "aborted.txt");
    h.script("test", [
      { toolCalls: [{ name: "wait_abort", input: { marker, running: running() } }] },
    ]);
    const { session } = await h.runtime.sessions.create({ agentId: "support" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "wait" });
    await atEgress;
    await h.runtime.sessions.interrupt(session.id);
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId);
    expect(turn.status).toBe("cancelled");
    release();
    // A started tool would write its file at once; give a worker's round trip time to show it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(running())).toBe(false);
    const failed = ofType(await h.events(session.id), "tool.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data).toMatchObject({ tool: "wait_abort", settledBy: expect.anything() });
  });

  it("fails the turn agent_failed when the agent throws or breaks a render rule", async () => {
    h = await start([{ text: "never" }]);
    const thrown = await h.run("hi", "broken");
    expect(ofType(thrown.events, "turn.failed")[0]!.data).toMatchObject({
      code: "agent_failed",
      message: "Agent broken failed to render",
    });
    expect(JSON.stringify(h.logs)).toContain("agent exploded");
    const async = await h.run("hi", "asyncAgent");
    expect(ofType(async.events, "turn.failed")[0]!.data.message).toMatch(
      /^Agent asyncAgent failed to render: The agent function must be synchronous/,
    );
  });

  it("runs preview to propose and apply once approved, with the decision id", async () => {
    h = await start([
      { toolCalls: [{ name: "set_price", input: { sku: "s1", price: 5 } }] },
      { text: "awaiting approval" },
    ]);
    const { sessionId } = await h.run("set s1 to 5");
    const [approval] = await h.runtime.approvals.list(sessionId);
    expect(approval).toMatchObject({ status: "pending", card: { title: "Set s1 to 5" } });
    const previewPid = Number(
      (approval!.card as { facts: Array<{ value: string }> }).facts[0]!.value,
    );
    expect(previewPid === process.pid).toBe(execution === "in-process");
    const decided = await h.runtime.approvals.decide(approval!.id, { decision: "approve" });
    expect(decided.status).toBe("applied");
    expect(decided.outcome).toEqual({ applied: "s1", decisionId: decided.decision!.id });
  });

  it("commits the result tool's value as the session's result", async () => {
    h = await start([
      { toolCalls: [{ name: "report", input: { answer: "42" } }] },
      { text: "reported" },
    ]);
    const { sessionId } = await h.run("answer");
    const session = await h.runtime.sessions.get(sessionId);
    expect(session.result?.data).toEqual({ answer: "42" });
  });
});
