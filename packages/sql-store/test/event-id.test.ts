// Event ids: 12 random bytes as hex after `evt_`, unique across refills of the random pool.
import { describe, expect, it } from "vitest";
import { newEventId } from "../src/event-id.ts";

describe("newEventId", () => {
  it("spells 12 random bytes in hex, and does not repeat across pool refills", () => {
    // 4096-byte pool / 12 bytes per id: 1,000 ids refill it twice.
    const ids = Array.from({ length: 1000 }, () => newEventId());
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Every byte value shows up in some id: the table covers 00 to ff.
    const pairs = new Set(ids.flatMap((id) => id.slice(4).match(/../g) ?? []));
    expect(pairs.size).toBe(256);
  });
});
