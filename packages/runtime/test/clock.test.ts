// isoNow keeps the string of the last millisecond asked for: the same as formatting a Date,
// and never a millisecond behind the clock.
import { describe, expect, it } from "vitest";
import { isoNow } from "../src/clock.ts";

describe("isoNow", () => {
  it("is the clock's current millisecond as an ISO string, however often it is asked", async () => {
    for (let round = 0; round < 5; round++) {
      const before = Date.now();
      const iso = isoNow();
      const after = Date.now();
      expect(iso).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const ms = Date.parse(iso);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(after);
      await new Promise((r) => setTimeout(r, 2));
    }
  });
});
