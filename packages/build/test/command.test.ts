// `opencomputer build` / `opencomputer doctor`: output for people and for programs, exit codes.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CommandIO, runBuildCommand } from "../src/index.ts";
import { copyFixture, fixture } from "./helpers.ts";

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

describe("runBuildCommand", () => {
  const project = copyFixture("check-url");
  afterAll(() => project.remove());

  it("doctor --json prints every error as {code, message, file, line, column} and exits 1", async () => {
    const io = capture();
    const code = await runBuildCommand(
      { doctor: true, dir: fixture("result-rules"), json: true },
      io,
    );
    expect(code).toBe(1);
    const errors = JSON.parse(io.out) as Array<Record<string, unknown>>;
    expect(errors.map((e) => e.code).sort()).toEqual([
      "result_tool_conflict",
      "result_tool_requires_output",
      "result_tool_requires_run",
      "tool_name_duplicate",
      "tool_name_reserved",
    ]);
    for (const error of errors) {
      expect(Object.keys(error)).toEqual(["code", "message", "file", "line", "column"]);
    }
  });

  it("prints file:line:column: code message for people", async () => {
    const io = capture();
    const code = await runBuildCommand({ doctor: false, dir: fixture("result-rules") }, io);
    expect(code).toBe(1);
    const lines = io.err.trim().split("\n");
    expect(lines.at(-1)).toBe("5 errors");
    for (const line of lines.slice(0, -1)) {
      expect(line).toMatch(/^opencomputer\/agents\/[\w-]+\/[\w/.-]+:\d+:\d+: [a-z_]+ \S/);
    }
    expect(lines).toContain(
      `opencomputer/agents/reserved-ask/tools/check-url.ts:4:9: tool_name_reserved "name" "ask" is reserved: ask is the platform's question tool; select it with useTool("ask") instead of defining it`,
    );
    // A failed build writes nothing.
    expect(existsSync(join(fixture("result-rules"), ".opencomputer"))).toBe(false);
  });

  it("build prints each agent's deployment id; --json keeps stdout to the error array", async () => {
    const io = capture();
    expect(await runBuildCommand({ doctor: false, dir: project.dir }, io)).toBe(0);
    expect(io.out).toMatch(/^checker dep_[0-9a-f]{20} \(new\)\n$/);
    const again = capture();
    expect(await runBuildCommand({ doctor: false, dir: project.dir, json: true }, again)).toBe(0);
    expect(JSON.parse(again.out)).toEqual([]);
    // The summary follows whatever went to stderr (strict-warnings.test.ts prints warnings there).
    expect(again.err).toBe(`${io.err}${io.out.replace("(new)", "(unchanged)")}`);
    // lookup_order is not strict-mode ready, but checker only selects an Anthropic model.
    expect(io.err).not.toContain("tool_schema_not_strict");
  });

  it("doctor summarises each agent", async () => {
    const io = capture();
    expect(await runBuildCommand({ doctor: true, dir: project.dir }, io)).toBe(0);
    expect(io.out).toBe("checker: ok (2 tools, result tool check_url)\n");
  });
});
