import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType, until } from "./harness.ts";

const gates: Array<() => void> = [];
let runs: string[] = [];

const slowReport = defineTool({
  name: "slow_report",
  description: "Reports after a gate opens",
  output: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  result: true,
  run: ({ toolCallId }) =>
    new Promise((resolve) => {
      runs.push(toolCallId);
      gates.push(() => resolve({ n: runs.length }));
    }),
});
const quick = defineTool({
  name: "quick",
  description: "Completes at once",
  run: ({ toolCallId }) => {
    runs.push(`quick:${toolCallId}`);
    return "done";
  },
});

function agent() {
  useModel("script/test");
  useTool(slowReport);
  useTool(quick);
  return "Report.";
}

let h: Harness;
afterEach(async () => {
  gates.length = 0;
  runs = [];
  await h?.close();
});

describe("leases", () => {
  it("refuse a result commit from a runtime the session no longer runs on", async () => {
    h = await harness({
      agents: { agent },
      leaseMs: 60_000,
      steps: [{ toolCalls: [{ name: "slow_report" }] }, { text: "x" }],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    await until(() => gates.length === 1);
    // Another runtime takes the session over, as it would once this one's lease expired.
    const taken = await h.store.acquireLease(session.id, "rt_other", 60_000, Date.now() + 120_000);
    expect(taken).not.toBeNull();
    const lastSeq = (await h.store.getSession(session.id))!.lastSeq;
    gates[0]!();
    await new Promise((r) => setTimeout(r, 50));
    const after = (await h.store.getSession(session.id))!;
    expect(after.lastSeq).toBe(lastSeq);
    expect(after.result).toBeNull();
    expect(await h.store.listResults(session.id, { limit: 10 })).toHaveLength(0);
  });

  it("let a new runtime resume a turn whose runtime died: completed calls are not run again, started ones are, with the same toolCallId", async () => {
    h = await harness({
      agents: { agent },
      leaseMs: 200,
      steps: [{ toolCalls: [{ name: "quick" }, { name: "slow_report" }] }, { text: "reported" }],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    await until(() => gates.length === 1 && runs.some((r) => r.startsWith("quick:")));
    await until(async () =>
      (await h.store.listToolCalls(session.id)).some((c) => c.status === "completed"),
    );
    // The first runtime dies: it stops renewing and never writes again.
    await h.runtime.close();
    const second = h.newRuntime({ leaseMs: 200, recoveryIntervalMs: 50 });
    await second.start();
    await until(() => gates.length === 2, 5000);
    gates[1]!();
    const turn = await second.sessions.waitForTurn(session.id, turnId);
    expect(turn.status).toBe("completed");

    const events = await h.events(session.id);
    expect(ofType(events, "runtime.disconnected")).toHaveLength(1);
    const slowCalls = runs.filter((r) => !r.startsWith("quick:"));
    expect(slowCalls).toHaveLength(2);
    expect(slowCalls[0]).toBe(slowCalls[1]);
    expect(runs.filter((r) => r.startsWith("quick:"))).toHaveLength(1);
    const completed = ofType(events, "tool.completed");
    expect(completed.map((e) => e.data.tool).sort()).toEqual(["quick", "slow_report"]);
    expect(ofType(events, "tool.started").filter((e) => e.data.attempt === 2)).toHaveLength(1);
    expect((await second.sessions.get(session.id)).result).toMatchObject({
      callId: slowCalls[0],
      data: { n: 3 },
    });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // The first runtime's late completion changes nothing.
    const lastSeq = (await h.store.getSession(session.id))!.lastSeq;
    gates[0]!();
    await new Promise((r) => setTimeout(r, 50));
    expect((await h.store.getSession(session.id))!.lastSeq).toBe(lastSeq);
  });
});
