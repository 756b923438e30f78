// The runtime's timings from the environment (`opencomputer server`/`dev`): each is a whole
// number of milliseconds, and a bad one is a usage error that names the variable.

import { describe, expect, it } from "vitest";
import { runtimeEnv } from "../src/store-url.ts";

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
