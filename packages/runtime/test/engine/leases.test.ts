// Leases, in both execution modes: the agent is in fixtures/leases-agents.ts. Its runs and
// gates are marks (fixtures/marks.ts), so the test sees and releases them in either process.

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { marks, releaseGates, setMark } from "./fixtures/marks.ts";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS, until } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/leases-agents.ts", import.meta.url));

let h: Harness;
let sessionId = "";
afterEach(async () => {
  await releaseGates(sessionId, async () => h?.close());
  sessionId = "";
});

/** slow_report runs started so far (each waits on its gate). */
const gates = () => marks(sessionId, "slow").length;
const openGate = (i: number) => setMark(sessionId, `gate-${i}`);
const runs = () => marks(sessionId, "runs");

describe.each(EXECUTIONS)("leases (%s)", (execution) => {
  const start = (options: Parameters<typeof harness>[0]) =>
    harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, ...options });

  it("refuse a result commit from a runtime the session no longer runs on", async () => {
    h = await start({
      leaseMs: 60_000,
      steps: [{ toolCalls: [{ name: "slow_report" }] }, { text: "x" }],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    await until(() => gates() === 1);
    // Another runtime takes the session over, as it would once this one's lease expired.
    const taken = await h.store.acquireLease(session.id, "rt_other", 60_000, Date.now() + 120_000);
    expect(taken).not.toBeNull();
    const lastSeq = (await h.store.getSession(session.id))!.lastSeq;
    openGate(0);
    await until(() => marks(sessionId, "returned").length === 1);
    await new Promise((r) => setTimeout(r, 50));
    const after = (await h.store.getSession(session.id))!;
    expect(after.lastSeq).toBe(lastSeq);
    expect(after.result).toBeNull();
    expect(await h.store.listResults(session.id, { limit: 10 })).toHaveLength(0);
  });

  it("let a new runtime resume a turn whose runtime died: completed calls are not run again, started ones are, with the same toolCallId", async () => {
    h = await start({
      leaseMs: 200,
      steps: [{ toolCalls: [{ name: "quick" }, { name: "slow_report" }] }, { text: "reported" }],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    await until(() => gates() === 1 && runs().some((r) => r.startsWith("quick:")));
    await until(async () =>
      (await h.store.listToolCalls(session.id)).some((c) => c.status === "completed"),
    );
    // The first runtime dies: it stops renewing and never writes again.
    await h.runtime.close();
    const second = h.newRuntime({ leaseMs: 200, recoveryIntervalMs: 50 });
    await second.start();
    await until(() => gates() === 2, 5000);
    openGate(1);
    const turn = await second.sessions.waitForTurn(session.id, turnId);
    expect(turn.status).toBe("completed");

    const events = await h.events(session.id);
    expect(ofType(events, "runtime.disconnected")).toHaveLength(1);
    const slowCalls = runs().filter((r) => !r.startsWith("quick:"));
    expect(slowCalls).toHaveLength(2);
    expect(slowCalls[0]).toBe(slowCalls[1]);
    expect(runs().filter((r) => r.startsWith("quick:"))).toHaveLength(1);
    const completed = ofType(events, "tool.completed");
    expect(completed.map((e) => e.data.tool).sort()).toEqual(["quick", "slow_report"]);
    expect(ofType(events, "tool.started").filter((e) => e.data.attempt === 2)).toHaveLength(1);
    expect((await second.sessions.get(session.id)).result).toMatchObject({
      callId: slowCalls[0],
      data: { n: 3 },
    });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // The first runtime's late completion changes nothing. (In worker mode that copy died with
    // its runtime's worker; in-process it is still waiting here, and returns now.)
    const lastSeq = (await h.store.getSession(session.id))!.lastSeq;
    openGate(0);
    if (execution === "in-process") await until(() => marks(sessionId, "returned").length === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect((await h.store.getSession(session.id))!.lastSeq).toBe(lastSeq);
  });
});
