// Agent code can reach its worker's IPC channel (process.send is hidden, but process._send, fd 3
// and Node's handles are not) and take the worker's token from the messages it sends. What it
// forges there must not act for another session or deployment: the control plane hears a
// message only from the worker it sent the call to, only for a call still open there and with
// that call's key, and a worker never holds two sessions' calls at once.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EventRecord } from "@opencomputer/runtime";
import type { createWorkerExecution } from "@opencomputer/workers";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType, TEST_WORKERS, until } from "./engine/harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-forgery/agents.ts", import.meta.url));
type Workers = ReturnType<typeof createWorkerExecution>;

let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function begin(agentId: string, text: string) {
  const { session } = await h.runtime.sessions.create({ agentId });
  const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text });
  return { sessionId: session.id, turnId };
}

async function finish(turn: { sessionId: string; turnId: string }): Promise<EventRecord[]> {
  await h.runtime.sessions.waitForTurn(turn.sessionId, turn.turnId, { timeoutMs: 45_000 });
  return h.events(turn.sessionId);
}

describe("messages forged by agent code on its worker's channel", () => {
  it("cannot answer for, or report progress of, another session's or deployment's call", async () => {
    // One worker per deployment at most: the forger's session can only run where the victim's
    // call is, which is where a forged message would have the best chance.
    h = await harness({
      agentsModule: AGENTS,
      execution: "worker",
      workers: { ...TEST_WORKERS, maxWorkers: 1 },
    });
    const dir = join(h.dir, "work");
    mkdirSync(dir);
    h.script("test", [{ toolCalls: [{ name: "act", input: { dir } }] }, { text: "done" }]);
    const victim = await begin("shared", "wait");
    const elsewhere = await begin("other", "wait");
    for (const turn of [victim, elsewhere]) {
      await until(() => existsSync(join(dir, `${turn.sessionId}.started`)), 15_000);
    }
    const forger = await begin("shared", "forge");
    // Either the forger ran beside the victim's open call, or (as now) it waits for the worker.
    const execution = h.runtime.execution as Workers;
    await until(
      () => existsSync(join(dir, `${forger.sessionId}.forging`)) || execution.waiting() > 0,
      15_000,
    );
    writeFileSync(join(dir, "open"), "");
    const [victimEvents, elsewhereEvents, forgerEvents] = (await Promise.all(
      [victim, elsewhere, forger].map(finish),
    )) as [EventRecord[], EventRecord[], EventRecord[]];
    for (const [turn, events] of [
      [victim, victimEvents],
      [elsewhere, elsewhereEvents],
    ] as const) {
      expect(ofType(events, "tool.completed").map((e) => e.data.output)).toEqual([
        { victim: true, session: turn.sessionId },
      ]);
      expect(ofType(events, "tool.progress")).toHaveLength(0);
      expect(JSON.stringify(events)).not.toContain("forged");
      expect(ofType(events, "turn.completed")).toHaveLength(1);
    }
    // The forger had the token and sent its worst; it saw no other session's request, its own
    // call kept its real outcome, and the control plane refused what it sent (and lived).
    expect(ofType(forgerEvents, "tool.completed").map((e) => e.data.output)).toEqual([
      { forger: true, tokenTaken: true, sawOthers: 0 },
    ]);
    expect(ofType(forgerEvents, "tool.progress")).toHaveLength(0);
    expect(h.logs.filter((l) => l.message === "agent worker message refused").length).toBe(100);
    expect(JSON.stringify(h.logs)).not.toContain("agent worker lost");
  }, 90_000);
});
