// A project's model prices: the shipped table with `opencomputer/prices.json` on top, when the
// project has one (docs/models.md#cost). A malformed file stops start-up with the field named.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { checkPrices, createPricer, type Pricer } from "@opencomputer/models";

export function projectPricer(projectDir: string): Pricer {
  const file = join(projectDir, "opencomputer", "prices.json");
  if (!existsSync(file)) return createPricer();
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new OpenComputerError(
      "prices_invalid",
      `opencomputer/prices.json is not valid JSON: ${(error as Error).message}`,
    );
  }
  return createPricer(checkPrices(value, "opencomputer/prices.json"));
}
