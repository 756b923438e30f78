// What a model step costs. The shipped table holds list prices in US dollars per million tokens
// for the models whose prices we know (PRICES_AS_OF says when they were checked); a project can
// add or replace any entry (`opencomputer/prices.json`, docs/models.md). A model in neither is
// priced `unknown` with no cost: a guess from a similar model's price would be worse than none.
// Local models (`script/…`, `ollama/…`) are free.

import { OpenComputerError } from "@opencomputer/agent";
import type { StepCost, StepTokens } from "@opencomputer/runtime";

export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Reading cached input; the input rate when absent. */
  cacheReadPerMTok?: number;
  /** Writing input to the cache; the input rate when absent. */
  cacheWritePerMTok?: number;
}

export const PRICES_AS_OF = "2026-11-01";

/** Keys are `provider/model`; model names compare with `.` and `-` as the same character. */
export const PRICE_TABLE: Readonly<Record<string, ModelPrice>> = {
  "anthropic/claude-opus-4-5": {
    inputPerMTok: 5,
    outputPerMTok: 25,
    cacheReadPerMTok: 0.5,
    cacheWritePerMTok: 6.25,
  },
  "anthropic/claude-opus-4-1": {
    inputPerMTok: 15,
    outputPerMTok: 75,
    cacheReadPerMTok: 1.5,
    cacheWritePerMTok: 18.75,
  },
  "anthropic/claude-opus-4": {
    inputPerMTok: 15,
    outputPerMTok: 75,
    cacheReadPerMTok: 1.5,
    cacheWritePerMTok: 18.75,
  },
  "anthropic/claude-sonnet-4-5": {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheReadPerMTok: 0.3,
    cacheWritePerMTok: 3.75,
  },
  "anthropic/claude-sonnet-4": {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheReadPerMTok: 0.3,
    cacheWritePerMTok: 3.75,
  },
  "anthropic/claude-haiku-4-5": {
    inputPerMTok: 1,
    outputPerMTok: 5,
    cacheReadPerMTok: 0.1,
    cacheWritePerMTok: 1.25,
  },
  "anthropic/claude-3-5-haiku": {
    inputPerMTok: 0.8,
    outputPerMTok: 4,
    cacheReadPerMTok: 0.08,
    cacheWritePerMTok: 1,
  },
  "openai/gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  "openai/gpt-5-mini": { inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025 },
  "openai/gpt-5-nano": { inputPerMTok: 0.05, outputPerMTok: 0.4, cacheReadPerMTok: 0.005 },
  "openai/gpt-4-1": { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  "openai/gpt-4-1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6, cacheReadPerMTok: 0.1 },
  "openai/gpt-4-1-nano": { inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.025 },
  "openai/gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25 },
  "openai/gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075 },
  "openai/o3": { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  "openai/o4-mini": { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275 },
};

const FREE_PROVIDERS = new Set(["script", "ollama"]);

const normal = (modelId: string) => modelId.toLowerCase().replaceAll(".", "-");

export type Pricer = (modelId: string, tokens: StepTokens) => StepCost;

/** Prices steps from the shipped table with `overrides` on top (checked: see checkPrices). */
export function createPricer(overrides: Record<string, ModelPrice> = {}): Pricer {
  const table = new Map<string, { price: ModelPrice; from: "table" | "config" }>();
  for (const [id, price] of Object.entries(PRICE_TABLE))
    table.set(normal(id), { price, from: "table" });
  for (const [id, price] of Object.entries(overrides))
    table.set(normal(id), { price, from: "config" });
  return (modelId, tokens) => {
    const found = table.get(normal(modelId));
    if (!found) {
      const provider = modelId.slice(0, modelId.indexOf("/"));
      return FREE_PROVIDERS.has(provider)
        ? { costUsd: 0, pricing: "free" }
        : { costUsd: null, pricing: "unknown" };
    }
    const { price } = found;
    const micro =
      tokens.input * price.inputPerMTok +
      tokens.output * price.outputPerMTok +
      tokens.cacheRead * (price.cacheReadPerMTok ?? price.inputPerMTok) +
      tokens.cacheWrite * (price.cacheWritePerMTok ?? price.inputPerMTok);
    // Rounded to a millionth of a cent: sums over many steps stay exact enough to bill.
    return { costUsd: Math.round(micro / 1e-2) / 1e8, pricing: found.from };
  };
}

/** A project's price overrides, checked; `prices_invalid` names the entry and field at fault. */
export function checkPrices(value: unknown, where: string): Record<string, ModelPrice> {
  const fail = (path: string, message: string) =>
    new OpenComputerError("prices_invalid", `${where}: ${path} ${message}`, { path });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw fail("$", "must be an object of provider/model ids to prices");
  }
  const out: Record<string, ModelPrice> = {};
  for (const [id, price] of Object.entries(value)) {
    if (!/^[a-z0-9_-]+\/.+$/i.test(id)) throw fail(`$["${id}"]`, "is not a provider/model id");
    if (typeof price !== "object" || price === null) throw fail(`$["${id}"]`, "must be an object");
    const p = price as Record<string, unknown>;
    for (const key of Object.keys(p)) {
      if (
        !["inputPerMTok", "outputPerMTok", "cacheReadPerMTok", "cacheWritePerMTok"].includes(key)
      ) {
        throw fail(
          `$["${id}"].${key}`,
          "is not a price field (inputPerMTok, outputPerMTok, cacheReadPerMTok, cacheWritePerMTok)",
        );
      }
      const rate = p[key];
      if (typeof rate !== "number" || !Number.isFinite(rate) || rate < 0) {
        throw fail(`$["${id}"].${key}`, "must be a number ≥ 0 (US dollars per million tokens)");
      }
    }
    for (const key of ["inputPerMTok", "outputPerMTok"]) {
      if (p[key] === undefined) throw fail(`$["${id}"].${key}`, "is required");
    }
    out[id] = p as unknown as ModelPrice;
  }
  return out;
}
