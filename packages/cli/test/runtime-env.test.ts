// The runtime's timings and the PostgreSQL pipeline's size from the environment (`opencomputer
// server`/`dev`): each is a whole number, and a bad one is a usage error that names the variable.

import { describe, expect, it } from "vitest";
import { pipelineEnv, runtimeEnv } from "../src/store-url.ts";

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
