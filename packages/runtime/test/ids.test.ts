// Ids: prefix, 10 characters of millisecond time (Crockford base 32, so they sort by time),
// 10 random characters; the time part is spelled once per millisecond and reused.
import { describe, expect, it } from "vitest";
import { newId } from "../src/ids.ts";

describe("newId", () => {
  it("spells the time first so ids sort by it, and stays unique within one millisecond", () => {
    expect(newId("x", 0)).toMatch(/^x_0000000000[0-9a-hjkmnp-tv-z]{10}$/);
    expect(newId("x", 32).slice(2, 12)).toBe("0000000010");
    expect(newId("x", 2 ** 40 - 1).slice(2, 12)).toBe("00zzzzzzzz");
    const t = Date.UTC(2026, 11, 3);
    const same = Array.from({ length: 500 }, () => newId("ses", t));
    expect(new Set(same).size).toBe(500);
    for (const id of same) expect(id.slice(4, 14)).toBe(same[0]!.slice(4, 14));
    // Alternating two times (the cached part must follow the argument, not the last call).
    const a = newId("a", t);
    const b = newId("a", t + 1);
    const c = newId("a", t);
    expect(a.slice(2, 12)).toBe(c.slice(2, 12));
    expect(b.slice(2, 12) > a.slice(2, 12)).toBe(true);
  });
});
