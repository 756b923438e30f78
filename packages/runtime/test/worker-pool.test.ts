// The pool of worker processes behind one deployment: it grows when every worker is busy (so a
// tool that blocks its worker's event loop holds up no other session), stays at one worker
// when calls come one at a time, respects `workers.maxWorkers`, loses only the calls of a lost
// worker, and shrinks quietly as idle workers stop.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpenComputerError } from "@opencomputer/agent";
import { createStaticAgents, type EventRecord } from "@opencomputer/runtime";
import { createWorkerExecution, type WorkerPoolOptions } from "@opencomputer/workers";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType, TEST_WORKERS, until } from "./engine/harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-pool/agents.ts", import.meta.url));
type Workers = ReturnType<typeof createWorkerExecution>;

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** A harness whose script has every session call `act` once in `<dir>/acts`, then answer. */
async function poolHarness(workers: WorkerPoolOptions): Promise<{ dir: string }> {
  h = await harness({ agentsModule: AGENTS, execution: "worker", workers });
  const dir = join(h.dir, "acts");
  mkdirSync(dir);
  h.script("test", [{ toolCalls: [{ name: "act", input: { dir } }] }, { text: "done" }]);
  return { dir };
}

function execution(): Workers {
  return h.runtime.execution as Workers;
}

function workerPids(): number[] {
  return execution()
    .workers()
    .map((w) => w.hostPid!);
}

/** Starts a session whose text picks what its `act` does (see the fixture). */
async function begin(text: string): Promise<{ sessionId: string; turnId: string }> {
  const { session } = await h.runtime.sessions.create({ agentId: "pool" });
  const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text });
  return { sessionId: session.id, turnId };
}

async function finish(turn: { sessionId: string; turnId: string }): Promise<EventRecord[]> {
  await h.runtime.sessions.waitForTurn(turn.sessionId, turn.turnId, { timeoutMs: 45_000 });
  return h.events(turn.sessionId);
}

function terminal(events: EventRecord[]): string[] {
  return events
    .map((e) => e.type)
    .filter((t) => ["turn.completed", "turn.failed", "turn.cancelled"].includes(t));
}

function output(events: EventRecord[]): Record<string, unknown> {
  const completed = ofType(events, "tool.completed");
  expect(completed).toHaveLength(1);
  return completed[0]!.data.output as Record<string, unknown>;
}

/** The pid a session's `act` left when it started, once it has. */
async function startedPid(dir: string, sessionId: string): Promise<number> {
  const mark = join(dir, `${sessionId}.started`);
  await until(() => existsSync(mark) && readFileSync(mark, "utf8").length > 0, 20_000);
  return Number(readFileSync(mark, "utf8"));
}

describe("the worker pool of a deployment", () => {
  it("a tool blocking its worker's event loop does not hold up another session", async () => {
    // Generous heartbeat and render deadlines: the blocked worker must not be replaced (that
    // would free the other session for the wrong reason).
    const { dir } = await poolHarness({
      timings: { heartbeatTimeoutMs: 60_000, renderDeadlineMs: 60_000 },
    });
    const a = await begin("block");
    const blocker = await startedPid(dir, a.sessionId);
    // A's worker now spins synchronously until B's tool creates the marker. With one worker,
    // B's render would queue behind it and A would give up after 20 s without the marker.
    const b = await begin("release");
    const [eventsA, eventsB] = await Promise.all([finish(a), finish(b)]);
    expect(terminal(eventsA)).toEqual(["turn.completed"]);
    expect(terminal(eventsB)).toEqual(["turn.completed"]);
    expect(output(eventsA)).toEqual({ sawMarker: true, pid: blocker });
    expect(output(eventsB).pid).not.toBe(blocker);
    expect(ofType([...eventsA, ...eventsB], "runtime.disconnected")).toHaveLength(0);
    expect(JSON.stringify(h.logs)).not.toContain("agent worker lost");
  }, 90_000);

  it("sessions run one after another use a single worker", async () => {
    const { dir } = await poolHarness(TEST_WORKERS);
    const pids = new Set<number>();
    for (let i = 0; i < 3; i++) {
      const turn = await begin("whoami");
      const events = await finish(turn);
      expect(terminal(events)).toEqual(["turn.completed"]);
      pids.add(output(events).pid as number);
      expect(await startedPid(dir, turn.sessionId)).toBe(output(events).pid);
    }
    expect(pids.size).toBe(1);
    expect(workerPids()).toEqual([...pids]);
  });

  it("maxWorkers: 1 keeps one worker under concurrent turns, one session's calls at a time", async () => {
    const { dir } = await poolHarness({ ...TEST_WORKERS, maxWorkers: 1 });
    const a = await begin("hold");
    await until(() => existsSync(join(dir, `${a.sessionId}.started`)), 15_000);
    // The other session's render waits for the worker rather than share it with A's call: agent
    // code could read (and answer for) any request sent to its own worker.
    const b = await begin("whoami");
    await until(() => execution().waiting() === 1, 15_000);
    writeFileSync(join(dir, "open"), "");
    const [eventsA, eventsB] = await Promise.all([finish(a), finish(b)]);
    expect(output(eventsA)).toMatchObject({ opened: true, started: 1 });
    expect(output(eventsB).pid).toBe(output(eventsA).pid);
    expect(workerPids()).toEqual([output(eventsA).pid]);
  });

  it("an invalid maxWorkers is refused with a typed error naming workers.maxWorkers", async () => {
    h = await harness({ agentsModule: AGENTS });
    for (const bad of [0, 1.5, "2", -1, Number.NaN]) {
      let error: unknown;
      try {
        h.newRuntime({ execution: "worker", workers: { maxWorkers: bad as number } });
      } catch (e) {
        error = e;
      }
      expect(error, String(bad)).toBeInstanceOf(OpenComputerError);
      expect((error as OpenComputerError).code).toBe("invalid_option");
      expect((error as OpenComputerError).path).toBe("workers.maxWorkers");
      expect((error as Error).message).toContain("workers.maxWorkers");
    }
    // The same check guards the execution created on its own.
    const agents = createStaticAgents({ projectDir: h.dir, agents: {} });
    expect(() => createWorkerExecution({ agents, maxWorkers: 0 })).toThrow(/workers\.maxWorkers/);
    // Integers from 1 up are taken.
    for (const good of [1, 2, 16]) {
      expect(() =>
        h.newRuntime({ execution: "worker", workers: { maxWorkers: good } }),
      ).not.toThrow();
    }
  });

  it("a worker killed mid-call fails only its own call; the other worker's call completes", async () => {
    const { dir } = await poolHarness({ ...TEST_WORKERS, maxWorkers: 2 });
    const a = await begin("hang");
    const pidA = await startedPid(dir, a.sessionId);
    const b = await begin("gate");
    const pidB = await startedPid(dir, b.sessionId);
    expect(pidB).not.toBe(pidA);
    expect(workerPids().sort()).toEqual([pidA, pidB].sort());
    process.kill(pidA, "SIGKILL");
    // A's turn sees the loss and is resumed while B's call is still open on its own worker.
    await until(
      async () => ofType(await h.events(a.sessionId), "runtime.disconnected").length > 0,
      20_000,
    );
    writeFileSync(join(dir, "open"), "");
    const [eventsA, eventsB] = await Promise.all([finish(a), finish(b)]);
    // A: as after any loss (worker.test.ts), resumed and its call run again with its id.
    expect(terminal(eventsA)).toEqual(["turn.completed"]);
    expect(ofType(eventsA, "runtime.disconnected")).toHaveLength(1);
    const started = ofType(eventsA, "tool.started");
    expect(started).toHaveLength(2);
    expect(started[1]!.data).toMatchObject({ callId: started[0]!.data.callId, attempt: 2 });
    expect(output(eventsA)).toMatchObject({
      attempt: "again",
      toolCallId: started[0]!.data.callId,
    });
    // B: untouched by the loss.
    expect(terminal(eventsB)).toEqual(["turn.completed"]);
    expect(ofType(eventsB, "runtime.disconnected")).toHaveLength(0);
    expect(ofType(eventsB, "tool.started")).toHaveLength(1);
    expect(output(eventsB)).toEqual({ opened: true, pid: pidB });
    expect(workerPids()).not.toContain(pidA);
  });

  it("extra workers stop when idle, quietly, and the pool starts afresh", async () => {
    await poolHarness({ timings: { ...TEST_WORKERS.timings, idleMs: 1500 } });
    const [a, b] = [await begin("meet"), await begin("meet")];
    const [eventsA, eventsB] = await Promise.all([finish(a), finish(b)]);
    // Both calls were in flight at once, so the second found the first worker busy.
    expect(output(eventsA).pid).not.toBe(output(eventsB).pid);
    await until(() => workerPids().length === 0, 20_000);
    const events = await finish(await begin("whoami"));
    expect(terminal(events)).toEqual(["turn.completed"]);
    expect(ofType(events, "runtime.disconnected")).toHaveLength(0);
    expect(workerPids()).toEqual([output(events).pid]);
    expect(JSON.stringify(h.logs)).not.toContain("agent worker lost");
  });
});
