// The seed's three result-tool rules, the reserved `ask`, and unique names; one agent per rule
// in the `result-rules` fixture project.

import { beforeAll, describe, expect, it } from "vitest";
import { type CheckResult, checkProject } from "../src/index.ts";
import { at, expectOnlyError, fixture } from "./helpers.ts";

const dir = fixture("result-rules");
let result: CheckResult;

beforeAll(async () => {
  result = await checkProject(dir);
});

describe("result tool rules", () => {
  it("at most one result tool per agent, conditional selection included; the error names both", () => {
    const prefix = "opencomputer/agents/conflict/";
    const error = expectOnlyError(result.errors, prefix, {
      code: "result_tool_conflict",
      ...at(dir, `${prefix}tools/report-status.ts`, "result: true"),
    });
    const first = at(dir, `${prefix}tools/check-url.ts`, "result: true");
    expect(error.message).toContain(`"check_url" (${first.file}:${first.line}:${first.column})`);
    expect(error.message).toContain(`"report_status"`);
  });

  it("a result tool declares output", () => {
    const prefix = "opencomputer/agents/requires-output/";
    expectOnlyError(result.errors, prefix, {
      code: "result_tool_requires_output",
      ...at(dir, `${prefix}tools/check-url.ts`, "result: true"),
    });
  });

  it("a result tool has run, not preview/apply", () => {
    const prefix = "opencomputer/agents/requires-run/";
    expectOnlyError(result.errors, prefix, {
      code: "result_tool_requires_run",
      ...at(dir, `${prefix}tools/check-url.ts`, "preview:"),
    });
  });

  it("ask is reserved", () => {
    const prefix = "opencomputer/agents/reserved-ask/";
    const error = expectOnlyError(result.errors, prefix, {
      code: "tool_name_reserved",
      ...at(dir, `${prefix}tools/check-url.ts`, '"ask"'),
    });
    expect(error.message).toContain('useTool("ask")');
  });

  it("tool names are unique within an agent", () => {
    const prefix = "opencomputer/agents/duplicate-name/";
    expectOnlyError(result.errors, prefix, {
      code: "tool_name_duplicate",
      ...at(dir, `${prefix}tools/check-url-again.ts`, "defineTool({"),
    });
  });

  it("still records what it could: both result tools of the conflicting agent", () => {
    const conflict = result.agents.find((a) => a.agentId === "conflict");
    expect(conflict?.tools.map((t) => [t.name, t.result])).toEqual([
      ["check_url", true],
      ["report_status", true],
    ]);
  });
});
