// The runtime's timings and the PostgreSQL pipeline's size from the environment (`opencomputer
// server`/`dev`): each is a whole number, and a bad one is a usage error that names the variable.
// And the start-up line that says which pipeline the store chose, and why.

import { describe, expect, it } from "vitest";
import { pipelineEnv, postgresDescription, runtimeEnv } from "../src/store-url.ts";

describe("runtimeEnv", () => {
  it("reads the apply timeout like the other timings", () => {
    expect(
      runtimeEnv({ OPENCOMPUTER_APPLY_TIMEOUT_MS: "5000", OPENCOMPUTER_LEASE_MS: "2000" }),
    ).toEqual({ applyTimeoutMs: 5000, leaseMs: 2000 });
    expect(runtimeEnv({})).toEqual({});
  });

  it("refuses an apply timeout that is not a whole number of milliseconds", () => {
    expect(() => runtimeEnv({ OPENCOMPUTER_APPLY_TIMEOUT_MS: "soon" })).toThrow(
      /OPENCOMPUTER_APPLY_TIMEOUT_MS must be a whole number of milliseconds/,
    );
  });
});

describe("pipelineEnv", () => {
  it("reads the PostgreSQL pipeline's size, leaving unset fields to the store", () => {
    expect(pipelineEnv({})).toEqual({});
    expect(pipelineEnv({ OPENCOMPUTER_PG_FILL: "2" })).toEqual({ fill: 2 });
    expect(pipelineEnv({ OPENCOMPUTER_PG_CONNECTIONS: "8", OPENCOMPUTER_PG_FILL: "" })).toEqual({
      connections: 8,
    });
  });

  it("refuses a size that is not a whole number in range, naming the variable", () => {
    for (const [name, raw] of [
      ["OPENCOMPUTER_PG_CONNECTIONS", "0"],
      ["OPENCOMPUTER_PG_CONNECTIONS", "65"],
      ["OPENCOMPUTER_PG_FILL", "2.5"],
      ["OPENCOMPUTER_PG_FILL", "many"],
    ] as const) {
      expect(() => pipelineEnv({ [name]: raw })).toThrow(new RegExp(`^${name} must be a whole`));
    }
  });
});

describe("postgresDescription", () => {
  it("names the pipeline's shape and what chose it", () => {
    expect(postgresDescription({ connections: 8, fill: 2, flushMs: 1.234 })).toBe(
      "PostgreSQL, pipelined on up to 8 connections filled to 2 (a commit's flush took 1.23 ms)",
    );
    expect(postgresDescription({ connections: 2, fill: 32, flushMs: 0 })).toMatch(
      /2 connections filled to 32 \(commits do not wait for a disk flush\)$/,
    );
    expect(postgresDescription({ connections: 4, fill: 4, flushMs: null })).toMatch(
      /\(as configured\)$/,
    );
    expect(postgresDescription(null)).toBe("PostgreSQL, statements through the pool");
  });
});
