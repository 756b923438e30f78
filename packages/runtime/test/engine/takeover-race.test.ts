import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import type { WriteBatch } from "../../src/store/port.ts";
import { type Harness, harness, ofType, until } from "./harness.ts";

// Each run of `slow` waits on its own gate, opened by the test.
const gates: Array<() => void> = [];
let calls = 0;
const slow = defineTool({
  name: "slow",
  description: "Waits for the test",
  run: async () => {
    calls++;
    await new Promise<void>((resolve) => gates.push(resolve));
    return "done";
  },
});
const openAll = () => {
  for (const g of gates.splice(0)) g();
};
function agent() {
  useModel("script/test");
  useTool(slow);
  return "Work.";
}

let h: Harness;
afterEach(async () => {
  openAll();
  calls = 0;
  await h?.close();
});

describe("taking over from a runtime whose lease expired but which still writes", () => {
  it("reads the turn and conversation again after the claim, so steps and messages agree", async () => {
    h = await harness({
      agents: { agent },
      leaseMs: 60_000,
      steps: [
        { toolCalls: [{ name: "slow" }] },
        { toolCalls: [{ name: "slow" }] },
        { text: "finished" },
      ],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    await until(async () => (await h.store.getTurn(session.id, turnId))!.steps === 1);
    // The first runtime's lease runs out (it is slow, not dead): it can still write until
    // someone takes over, because the fence is the epoch.
    const lease = (await h.store.getSession(session.id))!.lease!;
    await h.store.renewLease(session.id, lease, -1);

    // The second runtime reads the turn (steps = 1), and only then claims it; in between the
    // first runtime finishes its tool call and writes its next model step (steps = 2).
    let raced = false;
    const second = h.newRuntime({ leaseMs: 60_000 });
    const original = h.store.applyWithLease.bind(h.store);
    h.store.applyWithLease = async (
      sessionId: string,
      runtimeId: string,
      ttlMs: number,
      batch: WriteBatch,
    ) => {
      if (!raced && runtimeId === second.runtimeId) {
        raced = true;
        openAll(); // the first runtime finishes call 1 and writes step 2, then waits in call 2
        await until(
          async () => (await h.store.getTurn(session.id, turnId))!.steps === 2 && calls === 2,
        );
      }
      return original(sessionId, runtimeId, ttlMs, batch);
    };
    await second.start();
    // The second runtime resumes call 2 (the first runtime's copy is still waiting): let both go;
    // only the second runtime's writes count now.
    await until(() => calls === 3);
    openAll();
    const turn = await second.sessions.waitForTurn(session.id, turnId, { timeoutMs: 10_000 });
    expect(raced).toBe(true);
    expect(turn.status).toBe("completed");
    const assistant = (await h.store.listMessages(session.id)).filter(
      (m) => m.turnId === turnId && m.role === "assistant",
    );
    expect(turn.steps).toBe(assistant.length);
    expect(ofType(await h.events(session.id), "usage.recorded")).toHaveLength(assistant.length);
  });
});
