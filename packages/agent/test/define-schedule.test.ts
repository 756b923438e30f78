import { describe, expect, it } from "vitest";
import { defineSchedule, ScheduleDefinitionError } from "../src/index.ts";
import { scheduleIssues } from "../src/internal.ts";

const base = { id: "weekday-hygiene", cron: "0 9 * * 1-5" };

describe("defineSchedule", () => {
  it("applies the documented defaults", () => {
    expect(defineSchedule(base)).toEqual({
      id: "weekday-hygiene",
      cron: "0 9 * * 1-5",
      timezone: "UTC",
      enabled: ["production"],
      overlap: "skip",
      dispatch: {},
    });
  });

  it("keeps the platform's sample as written, `default` meaning production", () => {
    const s = defineSchedule({
      ...base,
      timezone: "America/Los_Angeles",
      enabled: ["default", "development", "production"],
      overlap: "allow",
      dispatch: { text: "Review stale flags.", payload: { mode: "async", dryRun: true } },
    });
    expect(s.enabled).toEqual(["development", "production"]);
    expect(s.dispatch).toEqual({
      text: "Review stale flags.",
      payload: { mode: "async", dryRun: true },
    });
    expect(Object.isFrozen(s)).toBe(true);
  });

  it("names the field at fault with a stable code", () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...base, cron: "0 9 * *" }, "schedule_cron_invalid", "cron"],
      [{ ...base, cron: "*/5 * * * * *" }, "schedule_cron_invalid", "cron"],
      [{ ...base, timezone: "Mars/Olympus" }, "schedule_timezone_invalid", "timezone"],
      [{ ...base, enabled: ["staging"] }, "schedule_enabled_invalid", "enabled[0]"],
      [{ ...base, overlap: "queue" }, "schedule_overlap_invalid", "overlap"],
      [{ ...base, id: "has space" }, "schedule_id_invalid", "id"],
      [{ ...base, dispatch: { text: 3 } }, "schedule_dispatch_invalid", "dispatch.text"],
      [
        { ...base, dispatch: { payload: { at: new Date(0) } } },
        "schedule_payload_not_json",
        "dispatch.payload.at",
      ],
      [{ ...base, every: "day" }, "schedule_unknown_field", "every"],
    ];
    for (const [def, code, path] of cases) {
      let thrown: unknown;
      try {
        defineSchedule(def as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(def)).toBeInstanceOf(ScheduleDefinitionError);
      expect((thrown as ScheduleDefinitionError).code).toBe(code);
      expect((thrown as ScheduleDefinitionError).details.path).toBe(path);
    }
  });

  it("reports every issue at once for the build", () => {
    const issues = scheduleIssues({ id: "", cron: "x", timezone: "Nowhere/Else" });
    expect(issues.map((i) => i.path)).toEqual(["id", "cron", "timezone"]);
  });
});
