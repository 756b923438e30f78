// When an idle session's lease is given up (runtime-actors.ts releaseTime): never before
// `idleReleaseMs`, at most a grid step after it, and the same moment for sessions that went
// idle within one grid step, so a store can release them together.
import { describe, expect, it } from "vitest";
import { releaseTime } from "../../src/engine/runtime-actors.ts";

describe("releaseTime", () => {
  it("is idleReleaseMs later, rounded up to a tenth of it (at most 100 ms)", () => {
    for (const now of [1_000_000, 1_000_001, 1_000_050, 1_000_099, 1_000_100]) {
      const at = releaseTime(now, 1000);
      expect(at).toBeGreaterThanOrEqual(now + 1000);
      expect(at - (now + 1000)).toBeLessThan(100);
      expect(at % 100).toBe(0);
    }
    expect(releaseTime(1_000_003, 200)).toBe(1_000_220);
    expect(releaseTime(1_000_003, 60_000)).toBe(1_060_100);
  });

  it("gives sessions that went idle within one step the same moment", () => {
    expect(new Set([1_000_001, 1_000_040, 1_000_100].map((t) => releaseTime(t, 1000)))).toEqual(
      new Set([1_001_100]),
    );
  });

  it("is not rounded when the grid would be under a millisecond", () => {
    expect(releaseTime(1_000_003, 0)).toBe(1_000_003);
    expect(releaseTime(1_000_003, 9)).toBe(1_000_012);
  });
});
