// The core-wait gauge (src/core-wait.ts) on a scripted schedstat and clock: it reads "short"
// when the thread waited for a core for at least the threshold's share of the window, reads
// again only after the window, and stays off where schedstat cannot be read.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CoreWait } from "../src/core-wait.ts";

/** A gauge whose run-queue wait (ns) and clock (ms) the test sets; counts the reads. */
function scripted() {
  const state = { waitedNs: 0, now: 0, reads: 0 };
  const gauge = new CoreWait({
    read: () => {
      state.reads++;
      return `123456 ${state.waitedNs} 42\n`;
    },
    now: () => state.now,
    windowMs: 50,
    threshold: 0.5,
  });
  return { state, gauge };
}

describe("CoreWait", () => {
  it("reads short when the thread waited for a core half the window or more", () => {
    const { state, gauge } = scripted();
    state.now = 50;
    state.waitedNs = 24e6; // 24 of 50 ms
    expect(gauge.short()).toBe(false);
    state.now = 100;
    state.waitedNs += 25e6; // 25 of 50 ms
    expect(gauge.short()).toBe(true);
    state.now = 200;
    state.waitedNs += 10e6; // 10 of 100 ms: the whole time since the last reading counts
    expect(gauge.short()).toBe(false);
  });

  it("keeps its reading until the window has passed, without reading the file", () => {
    const { state, gauge } = scripted();
    const readsAtStart = state.reads;
    state.now = 60;
    state.waitedNs = 60e6;
    expect(gauge.short()).toBe(true);
    expect(state.reads).toBe(readsAtStart + 1);
    state.now = 109;
    state.waitedNs += 0;
    expect(gauge.short()).toBe(true);
    expect(state.reads).toBe(readsAtStart + 1);
    state.now = 110;
    expect(gauge.short()).toBe(false);
    expect(state.reads).toBe(readsAtStart + 2);
  });

  it("stays off, reading nothing more, where schedstat is missing or malformed", () => {
    let reads = 0;
    let now = 0;
    const missing = new CoreWait({
      read: () => {
        reads++;
        throw Object.assign(new Error("ENOENT"), { code: "ENOENT" });
      },
      now: () => now,
    });
    now = 1000;
    expect(missing.short()).toBe(false);
    expect(reads).toBe(1);
    const malformed = new CoreWait({ read: () => "not numbers", now: () => now });
    now = 2000;
    expect(malformed.short()).toBe(false);
  });

  it.runIf(process.platform === "linux")("reads this thread's schedstat on Linux", () => {
    const fields = readFileSync("/proc/thread-self/schedstat", "utf8").trim().split(" ");
    expect(fields).toHaveLength(3);
    expect(fields.every((f) => /^\d+$/.test(f))).toBe(true);
    // With the real file and a threshold of 0, any reading is "short"; a gauge that could not
    // read or parse the file would have turned itself off and say no.
    let now = 0;
    const gauge = new CoreWait({ now: () => now, threshold: 0 });
    now = 50;
    expect(gauge.short()).toBe(true);
  });
});
