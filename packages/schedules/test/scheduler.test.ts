import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listRuns, Scheduler } from "../src/index.ts";
import { deployed, type Stack, startStack, testClock } from "./stack.ts";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(async () => {
  await stack.close();
});

const catalogOf = (...schedules: ReturnType<typeof deployed>[]) => ({
  list: async () => schedules,
});

function scheduler(clock: { now: () => number }, schedules = [deployed()], holder = "rt_a") {
  return new Scheduler(stack.triggers, stack.runtime.sessions, catalogOf(...schedules), {
    holder,
    clock: clock.now,
    claimMs: 30_000,
    onError: (error) => {
      throw error;
    },
  });
}

const runsOf = async () =>
  (await listRuns(stack.triggers, { projectId: "default", limit: 200 })).runs.reverse();

describe("Scheduler", () => {
  it("starts one session per occurrence with the schedule's input, however many schedulers pass", async () => {
    const clock = testClock("2026-03-02T16:59:30.000Z");
    const schedules = [
      deployed({ dispatch: { text: "Review flags.", payload: { mode: "async" } } }),
    ];
    const a = scheduler(clock, schedules, "rt_a");
    const b = scheduler(clock, schedules, "rt_b");
    // The first pass only starts the cursor: nothing from before the schedule was seen runs.
    expect((await a.pass()).started).toEqual([]);
    clock.set("2026-03-02T17:00:05.000Z");
    const reports = await Promise.all([a.pass(), b.pass(), a.pass(), b.pass()]);
    expect(reports.flatMap((r) => r.started)).toHaveLength(1);
    const [run] = await runsOf();
    // The same pass records the outcome when the turn was that quick.
    expect(["started", "completed"]).toContain(run!.status);
    expect(run).toMatchObject({
      intendedAt: "2026-03-02T17:00:00.000Z",
      environment: "production",
      manual: false,
      attempt: 1,
    });
    const session = await stack.runtime.sessions.get(run!.sessionId!);
    expect(session.source).toBe("schedule");
    expect(session.turns).toHaveLength(1);
    expect(session.turns[0]!.input).toEqual({
      source: "schedule",
      text: "Review flags.",
      payload: { mode: "async" },
      schedule: {
        scheduleId: "every-minute",
        runId: run!.id,
        intendedAt: "2026-03-02T17:00:00.000Z",
        timezone: "UTC",
        attempt: 1,
        manual: false,
      },
    });
    await stack.runtime.sessions.waitForTurn(session.id, run!.turnId!);
    expect(stack.seen).toContainEqual(session.turns[0]!.input);
    // The next pass records the outcome.
    await a.pass();
    expect((await runsOf())[0]!.status).toBe("completed");
  });

  it("records occurrences missed while nothing ran, starts only the one on time", async () => {
    const clock = testClock("2026-03-02T16:59:30.000Z");
    const s = scheduler(clock);
    await s.pass();
    clock.set("2026-03-02T17:10:30.000Z");
    const report = await s.pass();
    expect(report.missed).toBe(10);
    expect(report.started).toHaveLength(1);
    const runs = await runsOf();
    const started = (status: string) => (status === "completed" ? "started" : status);
    expect(runs.map((r) => `${r.intendedAt.slice(11, 16)} ${started(r.status)}`)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `17:0${i} missed`),
      "17:10 started",
    ]);
    // Passing again changes nothing.
    const again = await s.pass();
    expect([again.missed, again.started.length]).toEqual([0, 0]);
  });

  it("skips an occurrence while an earlier run is still starting, and takes over a dead starter's claim", async () => {
    const clock = testClock("2026-03-02T16:59:30.000Z");
    const s = scheduler(clock, [deployed({ overlap: "skip" })], "rt_live");
    await s.pass();
    // A process claimed 17:00 and died before starting it.
    const dead = await stack.triggers.insertScheduleRun({
      projectId: "default",
      environment: "production",
      agentId: "hygiene",
      scheduleId: "every-minute",
      id: "run_dead",
      intendedAt: "2026-03-02T17:00:00.000Z",
      timezone: "UTC",
      manual: false,
      status: "claimed",
      deploymentId: "static",
      claimedBy: "rt_dead",
      claimExpiresAt: Date.parse("2026-03-02T17:00:30.000Z"),
      error: null,
      createdAt: "2026-03-02T17:00:00.010Z",
    });
    expect(dead.created).toBe(true);
    clock.set("2026-03-02T17:00:10.000Z");
    expect((await s.pass()).started).toEqual([]);
    clock.set("2026-03-02T17:01:05.000Z");
    const report = await s.pass();
    expect(report.skipped).toHaveLength(1);
    expect(report.resumed).toEqual(["run_dead"]);
    const runs = await runsOf();
    expect(runs.map((r) => [r.intendedAt.slice(11, 16), r.status, r.attempt])).toEqual([
      ["17:00", expect.stringMatching(/^(started|completed)$/), 2],
      ["17:01", "skipped", 1],
    ]);
    const session = await stack.runtime.sessions.get(runs[0]!.sessionId!);
    expect(session.turns[0]!.input.schedule).toMatchObject({ runId: "run_dead", attempt: 2 });
  });

  it("runs now on demand, in an environment where the schedule does not recur", async () => {
    const clock = testClock("2026-03-02T16:59:30.000Z");
    const s = scheduler(clock);
    const run = await s.runNow({
      environment: "development",
      agentId: "hygiene",
      scheduleId: "every-minute",
    });
    expect(run).toMatchObject({ manual: true, environment: "development" });
    expect(run.sessionId).not.toBeNull();
    const session = await stack.runtime.sessions.get(run.sessionId!);
    expect(session.environment).toBe("development");
    expect(session.turns[0]!.input.schedule).toMatchObject({ manual: true, runId: run.id });
    await expect(
      s.runNow({ environment: "production", agentId: "hygiene", scheduleId: "nope" }),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  it("pages run history newest first", async () => {
    const clock = testClock("2026-03-02T16:59:30.000Z");
    const s = scheduler(clock);
    await s.pass();
    clock.set("2026-03-02T17:05:10.000Z");
    await s.pass();
    const first = await listRuns(stack.triggers, { projectId: "default", limit: 4 });
    expect(first.runs.map((r) => r.intendedAt.slice(11, 16))).toEqual([
      "17:05",
      "17:04",
      "17:03",
      "17:02",
    ]);
    expect(first.runs[0]).not.toHaveProperty("claimedBy");
    const second = await listRuns(stack.triggers, {
      projectId: "default",
      limit: 4,
      cursor: first.nextCursor!,
    });
    expect(second.runs.map((r) => r.intendedAt.slice(11, 16))).toEqual(["17:01", "17:00"]);
    expect(second.nextCursor).toBeNull();
    await expect(
      listRuns(stack.triggers, { projectId: "default", cursor: "x" }),
    ).rejects.toMatchObject({
      code: "invalid_input",
    });
  });
});
