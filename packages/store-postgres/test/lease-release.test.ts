// The batching of lease releases (src/lease-release.ts), without a database: the releases of
// one tick go in one call, a tick larger than a statement's share is split, a failed statement
// fails every release it carried (and no other), and `flush` sends what is pending at once.
import type { Lease } from "@opencomputer/runtime";
import { describe, expect, it } from "vitest";
import { LeaseReleases } from "../src/lease-release.ts";

const lease = (i: number): Lease => ({ runtimeId: `rt_${i % 2}`, epoch: i, expiresAt: 1000 + i });

function recorder(fail?: (ids: string[]) => boolean) {
  const calls: unknown[][][] = [];
  const releases = new LeaseReleases(async (...arrays) => {
    calls.push(arrays);
    if (fail?.(arrays[0])) throw new Error("connection lost");
  });
  return { calls, releases };
}

describe("LeaseReleases", () => {
  it("sends the releases of one tick in one call, as parallel arrays in the order asked", async () => {
    const { calls, releases } = recorder();
    await Promise.all([0, 1, 2].map((i) => releases.release(`ses_${i}`, lease(i))));
    expect(calls).toEqual([
      [
        ["ses_0", "ses_1", "ses_2"],
        ["rt_0", "rt_1", "rt_0"],
        [0, 1, 2],
        [1000, 1001, 1002],
      ],
    ]);
    await releases.release("ses_3", lease(3));
    expect(calls).toHaveLength(2);
    expect(calls[1]![0]).toEqual(["ses_3"]);
  });

  it("splits a tick of more than 500 into several calls", async () => {
    const { calls, releases } = recorder();
    await Promise.all(
      Array.from({ length: 1201 }, (_, i) => releases.release(`ses_${i}`, lease(i))),
    );
    expect(calls.map((c) => (c[0] as string[]).length)).toEqual([500, 500, 201]);
  });

  it("fails every release of a failed call, and only those", async () => {
    const { releases } = recorder((ids) => ids.includes("ses_700"));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 800 }, (_, i) => releases.release(`ses_${i}`, lease(i))),
    );
    const rejected = outcomes.flatMap((o, i) => (o.status === "rejected" ? [i] : []));
    expect(rejected).toEqual(Array.from({ length: 300 }, (_, i) => 500 + i));
    expect((outcomes[700] as PromiseRejectedResult).reason.message).toBe("connection lost");
  });

  it("sends what is pending when flushed, before the tick ends", async () => {
    const { calls, releases } = recorder();
    const released = releases.release("ses_a", lease(1));
    const flushed = releases.flush();
    expect(calls).toHaveLength(1);
    await Promise.all([released, flushed]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(calls).toHaveLength(1);
  });
});
