// `opencomputer/budgets.json`: budgets per label value, checked when a runtime starts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { UsageStore } from "@opencomputer/runtime";
import { periodOf } from "@opencomputer/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { projectLabelBudgets } from "../src/budgets.ts";

const usage: UsageStore = { rollUp: () => Promise.reject(new Error("not read here")) };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(budgets: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "oc-budgets-"));
  dirs.push(dir);
  mkdirSync(join(dir, "opencomputer"));
  const text = typeof budgets === "string" ? budgets : JSON.stringify(budgets);
  writeFileSync(join(dir, "opencomputer", "budgets.json"), text);
  return dir;
}

describe("opencomputer/budgets.json", () => {
  it("declares a budget for every value of a label and one for a single value", () => {
    const dir = project({
      labels: {
        customer: { maxCostUsd: 50, period: "month" },
        "customer=acme": { maxCostUsd: 500, maxTokens: 10_000_000, period: "day" },
      },
    });
    expect(projectLabelBudgets(dir, usage).labelBudgets?.budgets).toEqual([
      { label: "customer", maxCostUsd: 50, period: "month" },
      { label: "customer", value: "acme", maxCostUsd: 500, maxTokens: 10_000_000, period: "day" },
    ]);
  });

  it("is optional", () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-budgets-"));
    dirs.push(dir);
    expect(projectLabelBudgets(dir, usage)).toEqual({});
  });

  it("refuses a malformed file, naming the entry and field", () => {
    const cases: Array<[unknown, RegExp]> = [
      ["{", /not valid JSON/],
      [{ label: {} }, /label is not a field/],
      [
        { labels: { customer: { maxCostUsd: 5 } } },
        /labels\.customer\.period must be "day" or "month"/,
      ],
      [{ labels: { customer: { period: "week", maxTokens: 1 } } }, /labels\.customer\.period/],
      [
        { labels: { customer: { period: "day" } } },
        /labels\.customer needs maxCostUsd or maxTokens/,
      ],
      [
        { labels: { Customer: { period: "day", maxTokens: 1 } } },
        /labels\.Customer names a label key/,
      ],
      [{ labels: { customer: { period: "day", maxCostUsd: -1 } } }, /labels\.customer\.maxCostUsd/],
      [
        { labels: { customer: { period: "day", maxTokens: 1, max: 2 } } },
        /labels\.customer\.max is not a field/,
      ],
    ];
    for (const [budgets, message] of cases) {
      expect(() => projectLabelBudgets(project(budgets), usage)).toThrow(message);
    }
  });

  it("counts periods in UTC days and calendar months", () => {
    const now = Date.parse("2026-02-28T23:30:00+00:00");
    expect(periodOf("day", now)).toEqual({
      from: "2026-02-28T00:00:00.000Z",
      to: "2026-03-01T00:00:00.000Z",
    });
    expect(periodOf("month", now)).toEqual({
      from: "2026-02-01T00:00:00.000Z",
      to: "2026-03-01T00:00:00.000Z",
    });
  });
});
