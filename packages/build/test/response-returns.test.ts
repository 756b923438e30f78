// A run or apply that returns a fetch Response: the runtime can record only its description, so
// doctor and build warn at the function (the type checker sees through helpers and awaits).

import { describe, expect, it } from "vitest";
import { checkProject } from "../src/index.ts";
import { at, fixture } from "./helpers.ts";

const BILLING = "opencomputer/agents/billing/tools/billing.ts";

describe("run / apply returning a Response", () => {
  it("warns for each function whose return type is a Response, and not for one returning JSON", async () => {
    const dir = fixture("response-returns");
    const result = await checkProject(dir);
    expect(result.errors).toEqual([]);
    const warned = result.warnings.filter((w) => w.code === "tool_returns_response");
    expect(warned).toEqual([
      expect.objectContaining({
        ...at(dir, BILLING, "async apply("),
        agentId: "billing",
        tool: "charge",
        path: "apply",
      }),
      expect.objectContaining({
        ...at(dir, BILLING, "async ({ input })", 'name: "refund"'),
        tool: "refund",
        path: "run",
      }),
    ]);
    expect(warned[0]?.message).toContain("return await response.json()");
    // An Anthropic-only agent with a strict-clean schema has no other warning.
    expect(result.warnings).toHaveLength(2);
  });
});
