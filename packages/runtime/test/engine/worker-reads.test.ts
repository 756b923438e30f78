// What the session worker reads to run a queued turn. It starts from the session as sendTurn
// read it and settles from what it knows under its lease, so a turn reads the session only
// once (in sendTurn); a stale copy is refused by the turn start's guards and read again.
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionRecord } from "../../src/ports/records.ts";
import type { Store } from "../../src/ports/store.ts";
import { type Harness, harness, ofType } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/basics-agents.ts", import.meta.url));
const STEPS = [
  { text: "Let me look.", toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }] },
  { text: "A1 is processing." },
  { text: "Anything else?" },
];

describe("the session worker's reads", () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  /**
   * A harness whose reads of the session (alone or with its active turns) are counted, and
   * answer with `staleCopy` when one is set.
   */
  async function counted() {
    const state = { reads: 0, staleCopy: null as SessionRecord | null };
    h = await harness({
      agentsModule: AGENTS,
      steps: STEPS,
      wrapStore: (real) =>
        Object.assign(Object.create(real) as Store, {
          async getSession(sessionId: string) {
            state.reads++;
            return state.staleCopy ?? real.getSession(sessionId);
          },
          async getSessionWithActiveTurns(sessionId: string) {
            state.reads++;
            const read = await real.getSessionWithActiveTurns(sessionId);
            return read && { ...read, session: state.staleCopy ?? read.session };
          },
        }),
    });
    return state;
  }

  it("reads the session once per turn: in sendTurn", async () => {
    const state = await counted();
    const { session } = await h.runtime.sessions.create({ agentId: "support" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "Where is A1?" });
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId);
    expect(turn.status).toBe("completed");
    expect(state.reads).toBe(1);
    const events = await h.events(session.id);
    expect(ofType(events, "tool.completed")).toHaveLength(1);
    expect(ofType(events, "session.status_changed").map((e) => e.data)).toEqual([
      { from: "new", to: "running" },
      { from: "running", to: "idle" },
    ]);
  });

  it("never lists every turn of the session to run, steer, interrupt, end or list sessions", async () => {
    const listed = { all: 0, active: 0, lastSettled: 0 };
    h = await harness({
      agentsModule: AGENTS,
      steps: STEPS,
      wrapStore: (real) =>
        Object.assign(Object.create(real) as Store, {
          listTurns(sessionId: string) {
            listed.all++;
            return real.listTurns(sessionId);
          },
          listActiveTurns(sessionId: string) {
            listed.active++;
            return real.listActiveTurns(sessionId);
          },
          lastSettledTurn(sessionId: string) {
            listed.lastSettled++;
            return real.lastSettledTurn(sessionId);
          },
        }),
    });
    const { sessions } = h.runtime;
    const { session } = await sessions.create({ agentId: "support" });
    const first = await sessions.sendTurn(session.id, { text: "Where is A1?" });
    expect((await sessions.waitForTurn(session.id, first.turnId)).status).toBe("completed");
    const second = await sessions.sendTurn(session.id, { text: "Thanks" }, { mode: "interrupt" });
    expect((await sessions.waitForTurn(session.id, second.turnId)).status).toBe("completed");
    const page = await sessions.list();
    expect(page.sessions[0]!.activity.lastSettledTurn?.id).toBe(second.turnId);
    await sessions.interrupt(session.id);
    await sessions.end(session.id);
    expect(listed.all).toBe(0);
    expect(listed.active).toBeGreaterThan(0);
    expect(listed.lastSettled).toBe(1);
  });

  it("starts the turn all the same when sendTurn's copy of the session is stale", async () => {
    const state = await counted();
    const { sessionId } = await h.run("Where is A1?");
    // The session is idle now; sendTurn is handed the copy from before its first turn ("new").
    state.staleCopy = (await h.store.getSession(sessionId))!;
    state.staleCopy = { ...state.staleCopy, status: "new" };
    const sent = await h.runtime.sessions.sendTurn(sessionId, { text: "Thanks" });
    state.staleCopy = null;
    const readsBefore = state.reads;
    const turn = await h.runtime.sessions.waitForTurn(sessionId, sent.turnId);
    expect(turn.status).toBe("completed");
    expect(state.reads).toBeGreaterThan(readsBefore);
    const events = (await h.events(sessionId)).filter((e) => e.turnId === sent.turnId);
    expect(ofType(events, "turn.started")).toHaveLength(1);
    const all = await h.events(sessionId);
    // The start was refused once (nothing written) and made again from the session as it is.
    expect(ofType(all, "session.status_changed").map((e) => e.data)).toEqual([
      { from: "new", to: "running" },
      { from: "running", to: "idle" },
      { from: "idle", to: "running" },
      { from: "running", to: "idle" },
    ]);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
  });
});
