// A takeover racing a runtime that still writes, in both execution modes: the agent is in
// fixtures/takeover-race-agents.ts; its runs and gates are marks (fixtures/marks.ts).

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { WriteBatch } from "../../src/ports/store.ts";
import { clearMarks, marks, setMark } from "./fixtures/marks.ts";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS, until } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/takeover-race-agents.ts", import.meta.url));

let h: Harness;
let sessionId = "";
/** Runs of `slow` so far, in either process. */
const calls = () => marks(sessionId, "slow").length;
/** Opens the gate of every run started so far. */
const openAll = () => {
  for (let i = 0, n = calls(); i < n; i++) setMark(sessionId, `gate-${i}`);
};
afterEach(async () => {
  if (sessionId) openAll();
  await h?.close();
  if (sessionId) clearMarks(sessionId);
  sessionId = "";
});

describe.each(EXECUTIONS)(
  "taking over from a runtime whose lease expired but which still writes (%s)",
  (execution) => {
    it("reads the turn and conversation again after the claim, so steps and messages agree", async () => {
      h = await harness({
        agentsModule: AGENTS,
        execution,
        workers: TEST_WORKERS,
        leaseMs: 60_000,
        steps: [
          { toolCalls: [{ name: "slow" }] },
          { toolCalls: [{ name: "slow" }] },
          { text: "finished" },
        ],
      });
      const { session } = await h.runtime.sessions.create({ agentId: "agent" });
      sessionId = session.id;
      const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
      await until(async () => (await h.store.getTurn(session.id, turnId))!.steps === 1);
      // ...and its call 1 is running (in a worker that is a message away from tool.started).
      await until(() => calls() === 1);
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
            async () => (await h.store.getTurn(session.id, turnId))!.steps === 2 && calls() === 2,
          );
        }
        return original(sessionId, runtimeId, ttlMs, batch);
      };
      await second.start();
      // The second runtime resumes call 2 (the first runtime's copy is still waiting): let both go;
      // only the second runtime's writes count now.
      await until(() => calls() === 3);
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
  },
);
