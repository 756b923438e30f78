// The worker-loss count that fails a turn whose agent code keeps killing its worker: one count
// per runtime, bounded (the turn-level behaviour is in worker.test.ts, "runtime_lost").
import { describe, expect, it } from "vitest";
import { WorkerLosses } from "../../src/engine/worker-loss.ts";

describe("WorkerLosses", () => {
  it("counts per turn, separately for each runtime", () => {
    const a = new WorkerLosses();
    const b = new WorkerLosses();
    expect([a.note("turn_1"), a.note("turn_1"), a.note("turn_2")]).toEqual([1, 2, 1]);
    // Another runtime in the same process has its own count.
    expect(b.note("turn_1")).toBe(1);
    expect(a.note("turn_1")).toBe(3);
  });

  it("remembers the 1,000 most recently lost turns", () => {
    const losses = new WorkerLosses();
    losses.note("turn_old");
    losses.note("turn_kept");
    for (let i = 0; i < 998; i++) losses.note(`turn_${i}`);
    // turn_kept lost again: now the most recent, so the next new turn pushes out turn_old.
    expect(losses.note("turn_kept")).toBe(2);
    losses.note("turn_new");
    expect(losses.note("turn_old")).toBe(1);
    expect(losses.note("turn_kept")).toBe(3);
  });
});
