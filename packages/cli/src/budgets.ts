// A project's budgets per label value: `opencomputer/budgets.json`, when the project has one
// (docs/usage.md#budgets-per-label-value). A malformed file stops start-up with the entry named.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { checkLabelBudgets, type LabelBudgetOptions, type UsageStore } from "@opencomputer/runtime";

const WHERE = "opencomputer/budgets.json";

/** `{ labelBudgets }` to spread into createRuntime; empty when the project declares none. */
export function projectLabelBudgets(
  projectDir: string,
  usage: UsageStore,
): { labelBudgets?: LabelBudgetOptions } {
  const file = join(projectDir, "opencomputer", "budgets.json");
  if (!existsSync(file)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new OpenComputerError(
      "budgets_invalid",
      `${WHERE} is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new OpenComputerError("budgets_invalid", `${WHERE}: must be an object { labels }`);
  for (const key of Object.keys(value)) {
    if (key !== "labels")
      throw new OpenComputerError(
        "budgets_invalid",
        `${WHERE}: ${key} is not a field (allowed: labels)`,
        {
          path: key,
        },
      );
  }
  const budgets = checkLabelBudgets((value as { labels?: unknown }).labels ?? {}, WHERE);
  return budgets.length > 0 ? { labelBudgets: { usage, budgets } } : {};
}
