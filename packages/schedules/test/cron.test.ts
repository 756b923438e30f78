import { describe, expect, it } from "vitest";
import { compileCron, cronProblem, occurrencesBetween } from "../src/index.ts";

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe("cron (croner, five fields, IANA zones)", () => {
  it("follows the zone across a spring-forward gap and a fall-back repeat", () => {
    const spring = compileCron("30 2 * * *", "America/New_York");
    const march = occurrencesBetween(
      spring,
      new Date("2026-03-07T00:00:00Z"),
      new Date("2026-03-10T00:00:00Z"),
      10,
    );
    // 02:30 does not exist on 8 March: the run is at the first valid time after the gap.
    expect(iso(march.times)).toEqual([
      "2026-03-07T07:30:00.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-09T06:30:00.000Z",
    ]);
    const fall = compileCron("30 1 * * *", "America/New_York");
    const november = occurrencesBetween(
      fall,
      new Date("2026-10-31T00:00:00Z"),
      new Date("2026-11-03T00:00:00Z"),
      10,
    );
    // 01:30 happens twice on 1 November: one run.
    expect(iso(november.times)).toEqual([
      "2026-10-31T05:30:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
  });

  it("reads weekday ranges in the schedule's zone", () => {
    const weekdays = compileCron("0 9 * * 1-5", "America/Los_Angeles");
    const week = occurrencesBetween(
      weekdays,
      new Date("2026-03-13T00:00:00Z"),
      new Date("2026-03-17T00:00:00Z"),
      10,
    );
    expect(iso(week.times)).toEqual(["2026-03-13T16:00:00.000Z", "2026-03-16T16:00:00.000Z"]);
  });

  it("caps a scan and says there were more", () => {
    const everyMinute = compileCron("* * * * *", "UTC");
    const scan = occurrencesBetween(
      everyMinute,
      new Date("2026-01-01T00:00:00Z"),
      new Date("2026-01-01T01:00:00Z"),
      5,
    );
    expect(scan.times).toHaveLength(5);
    expect(scan.more).toBe(true);
  });

  it("explains what cannot be scheduled", () => {
    expect(cronProblem("0 9 * * 1-5", "Europe/London")).toBeNull();
    expect(cronProblem("61 * * * *", "UTC")).toMatch(/minute/);
    expect(cronProblem("0 0 31 2 *", "UTC")).toBe("never occurs");
    expect(cronProblem("*/10 * * * * *", "UTC")).not.toBeNull();
  });
});
