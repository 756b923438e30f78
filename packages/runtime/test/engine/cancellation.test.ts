// Interrupt, turn modes and end, in both execution modes: the agent is in
// fixtures/cancellation-agents.ts; what its tools saw is read from their marks (marks.ts).

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { clearMarks, marks, setMark } from "./fixtures/marks.ts";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS, until } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/cancellation-agents.ts", import.meta.url));

let h: Harness;
const sessions: string[] = [];
afterEach(async () => {
  await h?.close();
  for (const id of sessions.splice(0)) clearMarks(id);
});

/** Calls of the session's tools that have started (their abort listener is in place). */
const started = (sessionId: string) => marks(sessionId, "started").length;

describe.each(EXECUTIONS)("cancellation (%s)", (execution) => {
  const start = (steps: object[]) =>
    harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, steps: steps as never });

  async function startTurn(steps: object[], text = "go") {
    h = await start(steps);
    const { session } = await h.runtime.sessions.create({ agentId: "agent" });
    sessions.push(session.id);
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text });
    return { sessionId: session.id, turnId };
  }

  describe("interrupt", () => {
    it("aborts the running tool's signal and settles the turn cancelled (interrupted)", async () => {
      const { sessionId, turnId } = await startTurn([{ toolCalls: [{ name: "honours" }] }]);
      await until(() => started(sessionId) === 1);
      const { interruptedTurnIds } = await h.runtime.sessions.interrupt(sessionId);
      expect(interruptedTurnIds).toEqual([turnId]);
      expect(marks(sessionId, "aborted")).toHaveLength(1);
      const turn = await h.runtime.sessions.waitForTurn(sessionId, turnId);
      expect(turn.status).toBe("cancelled");
      const events = await h.events(sessionId);
      const cancelled = ofType(events, "turn.cancelled")[0]!;
      expect(cancelled.data).toMatchObject({
        reason: "interrupted",
        operationsSettled: true,
        computerTerminated: false,
      });
      expect(ofType(events, "tool.failed")[0]!.data.message).toBe("stopped by signal");
      expect((await h.runtime.sessions.get(sessionId)).status).toBe("idle");
    });

    it("settles a turn whose tool never honours its signal, with a synthetic tool.failed in the same write", async () => {
      const { sessionId, turnId } = await startTurn([{ toolCalls: [{ name: "stubborn" }] }]);
      await until(() => started(sessionId) === 1);
      await h.runtime.sessions.interrupt(sessionId);
      const events = await h.events(sessionId);
      const failed = ofType(events, "tool.failed")[0]!;
      const cancelled = ofType(events, "turn.cancelled")[0]!;
      expect(failed.data.settledBy).toBe("interrupted");
      expect(cancelled.seq).toBe(failed.seq + 1);
      expect(cancelled.data.operationsSettled).toBe(false);
      expect((await h.store.getTurn(sessionId, turnId))!.status).toBe("cancelled");

      // The tool finishes later: its result is refused, nothing is written.
      const lastSeq = (await h.store.getSession(sessionId))!.lastSeq;
      setMark(sessionId, "release");
      await until(() => marks(sessionId, "returned").length === 1);
      await new Promise((r) => setTimeout(r, 50));
      expect((await h.store.getSession(sessionId))!.lastSeq).toBe(lastSeq);
      expect((await h.runtime.sessions.get(sessionId)).result).toBeNull();
      expect((await h.store.getToolCall(sessionId, failed.data.callId as string))!.status).toBe(
        "failed",
      );
    });

    it("does nothing on an idle session", async () => {
      h = await start([]);
      const { session } = await h.runtime.sessions.create({ agentId: "agent" });
      const before = await h.events(session.id);
      expect(await h.runtime.sessions.interrupt(session.id)).toEqual({ interruptedTurnIds: [] });
      expect(await h.events(session.id)).toEqual(before);
    });

    it("lets the next queued turn start", async () => {
      const { sessionId } = await startTurn([
        { toolCalls: [{ name: "honours" }] },
        { text: "next turn ran" },
      ]);
      const { turnId: next } = await h.runtime.sessions.sendTurn(sessionId, { text: "then this" });
      await until(() => started(sessionId) === 1);
      await h.runtime.sessions.interrupt(sessionId);
      expect((await h.runtime.sessions.waitForTurn(sessionId, next)).status).toBe("completed");
    });
  });

  describe("turn modes", () => {
    it("interrupt mode cancels the running turn and runs the new one next, ahead of queued ones", async () => {
      const { sessionId, turnId } = await startTurn([
        { toolCalls: [{ name: "honours" }] },
        { text: "urgent" },
        { text: "queued" },
      ]);
      const { turnId: queued } = await h.runtime.sessions.sendTurn(sessionId, { text: "later" });
      await until(() => started(sessionId) === 1);
      const urgent = await h.runtime.sessions.sendTurn(
        sessionId,
        { text: "stop that" },
        { mode: "interrupt" },
      );
      await h.runtime.sessions.waitForTurn(sessionId, queued);
      const events = await h.events(sessionId);
      expect(ofType(events, "turn.interrupted")[0]!.data.interruptedTurnIds).toEqual([turnId]);
      expect(ofType(events, "turn.cancelled")[0]!.data).toMatchObject({
        reason: "interrupted",
        replacementTurnId: urgent.turnId,
      });
      expect(ofType(events, "turn.completed").map((e) => e.turnId)).toEqual([
        urgent.turnId,
        queued,
      ]);
    });

    it("steer delivers the input into the running turn before its next model step", async () => {
      h = await start([
        { delayMs: 150, text: "thinking", toolCalls: [{ name: "nope" }] },
        { text: "steered answer" },
      ]);
      const { session } = await h.runtime.sessions.create({ agentId: "agent" });
      const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "start" });
      await until(async () => (await h.store.getTurn(session.id, turnId))!.status === "running");
      const steer = await h.runtime.sessions.sendTurn(
        session.id,
        { text: "also check B2" },
        { mode: "steer" },
      );
      expect(steer.status).toBe("running");
      await h.runtime.sessions.waitForTurn(session.id, turnId);
      const events = await h.events(session.id);
      expect(ofType(events, "turn.steered")[0]!.data.activeTurnId).toBe(turnId);
      const messages = await h.store.listMessages(session.id);
      const userTexts = messages
        .filter((m) => m.role === "user")
        .map((m) => [m.turnId, JSON.stringify(m.content)]);
      expect(userTexts).toEqual([
        [turnId, expect.stringContaining("start")],
        [turnId, expect.stringContaining("also check B2")],
      ]);
      expect((await h.store.getTurn(session.id, steer.turnId))!).toMatchObject({
        status: "completed",
        outcome: "steered",
      });
    });

    it("steer on an idle session starts like a normal turn", async () => {
      h = await start([{ text: "hi" }]);
      const { session } = await h.runtime.sessions.create({ agentId: "agent" });
      const steer = await h.runtime.sessions.sendTurn(
        session.id,
        { text: "hello" },
        { mode: "steer" },
      );
      // Nothing runs, so the turn starts in the write that takes it (no turn.steered).
      expect(steer.status).toBe("running");
      expect((await h.runtime.sessions.waitForTurn(session.id, steer.turnId)).status).toBe(
        "completed",
      );
      expect(ofType(await h.events(session.id), "turn.steered")).toEqual([]);
    });
  });

  describe("end", () => {
    it("cancels the running and queued turns, ends the session, and is a no-op the second time", async () => {
      const { sessionId, turnId } = await startTurn([{ toolCalls: [{ name: "honours" }] }]);
      const { turnId: queued } = await h.runtime.sessions.sendTurn(sessionId, {
        text: "never runs",
      });
      await until(() => started(sessionId) === 1);
      await h.runtime.sessions.end(sessionId);
      const events = await h.events(sessionId);
      expect(ofType(events, "session.ended")).toHaveLength(1);
      const cancelled = ofType(events, "turn.cancelled");
      expect(cancelled.map((e) => [e.turnId, e.data.reason])).toEqual(
        expect.arrayContaining([
          [turnId, "session_ended"],
          [queued, "session_ended"],
        ]),
      );
      expect((await h.runtime.sessions.get(sessionId)).status).toBe("ended");
      const count = events.length;
      await h.runtime.sessions.end(sessionId);
      expect(await h.events(sessionId)).toHaveLength(count);
      await expect(h.runtime.sessions.sendTurn(sessionId, { text: "more" })).rejects.toMatchObject({
        code: "session_ended",
      });
    });
  });
});
