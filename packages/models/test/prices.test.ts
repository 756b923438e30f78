// Step prices: the shipped table, a project's overrides, free local models, unknown models left
// unpriced, and overrides checked with the entry and field named.

import { describe, expect, it } from "vitest";
import { checkPrices, createPricer } from "../src/index.ts";

const tokens = { input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 10_000 };

describe("step prices", () => {
  it("price a known model from the table, cache reads and writes at their own rates", () => {
    const price = createPricer();
    // 3 + 1.5 + 0.6 + 0.0375
    expect(price("anthropic/claude-sonnet-4.5", tokens)).toEqual({
      costUsd: 5.1375,
      pricing: "table",
    });
    // OpenAI bills no cache writes: they cost the input rate. 2 + 0.8 + 1 + 0.02
    expect(price("openai/gpt-4.1", tokens)).toEqual({ costUsd: 3.82, pricing: "table" });
  });

  it("say unknown for a model the table lacks, and free for local models", () => {
    const price = createPricer();
    expect(price("anthropic/claude-sonnet-9", tokens)).toEqual({
      costUsd: null,
      pricing: "unknown",
    });
    expect(price("script/demo", tokens)).toEqual({ costUsd: 0, pricing: "free" });
    expect(price("ollama/llama3", tokens)).toEqual({ costUsd: 0, pricing: "free" });
  });

  it("take a project's override over the table, and add models", () => {
    const overrides = checkPrices(
      {
        "anthropic/claude-sonnet-4.5": { inputPerMTok: 1, outputPerMTok: 1 },
        "acme/house-model": { inputPerMTok: 0.5, outputPerMTok: 2 },
      },
      "opencomputer/prices.json",
    );
    const price = createPricer(overrides);
    expect(price("anthropic/claude-sonnet-4.5", tokens)).toEqual({
      costUsd: 3.11,
      pricing: "config",
    });
    expect(
      price("acme/house-model", { input: 2_000_000, output: 0, cacheRead: 0, cacheWrite: 0 }),
    ).toEqual({
      costUsd: 1,
      pricing: "config",
    });
  });

  it("refuse malformed overrides, naming the entry and field", () => {
    const bad = (value: unknown) => () => checkPrices(value, "prices.json");
    expect(bad([])).toThrow(expect.objectContaining({ code: "prices_invalid" }));
    expect(bad({ nope: { inputPerMTok: 1, outputPerMTok: 1 } })).toThrow(
      /is not a provider\/model id/,
    );
    expect(bad({ "a/b": { inputPerMTok: -1, outputPerMTok: 1 } })).toThrow(
      expect.objectContaining({ details: { path: '$["a/b"].inputPerMTok' } }),
    );
    expect(bad({ "a/b": { inputPerMTok: 1 } })).toThrow(/outputPerMTok is required/);
    expect(bad({ "a/b": { inputPerMTok: 1, outputPerMTok: 1, perCall: 2 } })).toThrow(
      /is not a price field/,
    );
  });
});
