// A tool whose input schema OpenAI's strict mode refuses: the build warns (agent, tool, JSON
// path, reason, at the defineTool() call) and still writes the deployment.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProject, type CommandIO, checkProject, runBuildCommand } from "../src/index.ts";
import { at, copyFixture, fixture } from "./helpers.ts";

const ATTACH = "opencomputer/agents/support/tools/attach.ts";

describe("tool schemas outside OpenAI's strict mode", () => {
  const project = copyFixture("strict-warnings");
  afterAll(() => project.remove());

  it("warn with the agent, the tool, the JSON path and the reason; the build succeeds", async () => {
    const result = await buildProject(project.dir);
    expect(result.errors).toEqual([]);
    expect(result.deployments).toHaveLength(1);
    expect(existsSync(join(project.dir, ".opencomputer", "deployments"))).toBe(true);
    const where = at(project.dir, ATTACH, "defineTool({");
    // Sorted like errors: by position, then message.
    expect(result.warnings).toEqual([
      {
        code: "tool_schema_not_strict",
        message:
          'agent "support", tool "attach": input schema at $.properties.customerId: minLength is not supported in strict mode; OpenAI models get this tool without strict mode',
        ...where,
        agentId: "support",
        tool: "attach",
        path: "$.properties.customerId",
        reason: "minLength is not supported in strict mode",
      },
      expect.objectContaining({
        path: "$",
        reason: "additionalProperties: false is missing; strict mode needs it on every object",
      }),
      expect.objectContaining({
        path: "$",
        reason:
          "every property must be listed in required (optional ones as a union with null); not required: note",
      }),
    ]);
    // lookup_order's schema qualifies: nothing about it.
    expect(result.warnings.every((w) => w.tool === "attach")).toBe(true);
  });

  it("doctor reports the same warnings", async () => {
    const result = await checkProject(fixture("strict-warnings"));
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => `${w.tool} ${w.path}`)).toEqual([
      "attach $.properties.customerId",
      "attach $",
      "attach $",
    ]);
  });

  it("the command prints them as warning lines and exits 0; --json keeps stdout for errors", async () => {
    const io = capture();
    expect(await runBuildCommand({ doctor: false, dir: project.dir }, io)).toBe(0);
    const lines = io.err.trim().split("\n");
    expect(lines.at(-1)).toBe("3 warnings");
    const { line, column } = at(project.dir, ATTACH, "defineTool({");
    expect(lines[0]).toBe(
      `${ATTACH}:${line}:${column}: warning tool_schema_not_strict agent "support", tool "attach": input schema at $.properties.customerId: minLength is not supported in strict mode; OpenAI models get this tool without strict mode`,
    );
    expect(io.out).toMatch(/^support dep_[0-9a-f]{20} \((new|unchanged)\)\n$/);

    const json = capture();
    expect(await runBuildCommand({ doctor: true, dir: project.dir, json: true }, json)).toBe(0);
    expect(JSON.parse(json.out)).toEqual([]);
    expect(json.err).toContain("3 warnings");
  });
});

function capture(): CommandIO & { out: string; err: string } {
  const io = {
    out: "",
    err: "",
    stdout: (text: string) => {
      io.out += text;
    },
    stderr: (text: string) => {
      io.err += text;
    },
  };
  return io;
}
