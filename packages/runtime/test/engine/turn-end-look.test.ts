// What a turn's end costs in reads: the actor does not list the session's turns again after a
// turn that settled here with nothing else waiting, and a wait for a turn its own process runs
// reads the turn once, when it has settled. A turn queued while another runs still runs: its
// sendTurn kicks the actor.

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { releaseGates } from "./fixtures/marks.ts";
import { countingCalls, type Harness, harness } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/leases-agents.ts", import.meta.url));
/** Counts the store's reads of turns by method. */
const countingReads = (counts: Record<string, number>) =>
  countingCalls(["listActiveTurns", "getSessionWithActiveTurns", "getTurn"], counts);

let h: Harness;
let sessionId = "";
afterEach(async () => {
  await releaseGates(sessionId, async () => h?.close());
  sessionId = "";
});

describe("the end of a turn", () => {
  it("reads the active turns only in sendTurn (with the session), and the turn once, when it settled", async () => {
    const counts: Record<string, number> = {};
    h = await harness({
      agentsModule: AGENTS,
      steps: [{ text: "hello" }],
      wrapStore: countingReads(counts),
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const before = { ...counts };
    const sent = await h.runtime.sessions.sendTurn(session.id, { text: "hi" });
    expect(sent.status).toBe("running");
    const settled = await h.runtime.sessions.waitForTurn(session.id, sent.turnId);
    expect(settled.status).toBe("completed");
    // Let the actor finish whatever follows the settlement.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const delta = (key: string) => (counts[key] ?? 0) - (before[key] ?? 0);
    expect(delta("getSessionWithActiveTurns")).toBe(1);
    expect(delta("listActiveTurns")).toBe(0);
    expect(delta("getTurn")).toBe(1);
  });

  it("runs a turn queued while another runs", async () => {
    h = await harness({
      agentsModule: AGENTS,
      steps: [{ text: "one" }, { text: "two" }],
    });
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessionId = session.id;
    const first = await h.runtime.sessions.sendTurn(session.id, { text: "first" });
    const second = await h.runtime.sessions.sendTurn(session.id, { text: "second" });
    expect(first.status).toBe("running");
    expect(second.status).toBe("queued");
    expect((await h.runtime.sessions.waitForTurn(session.id, first.turnId)).status).toBe(
      "completed",
    );
    expect((await h.runtime.sessions.waitForTurn(session.id, second.turnId)).status).toBe(
      "completed",
    );
  });
});
