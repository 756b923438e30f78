// `opencomputer build` / `doctor` parse their arguments with the CLI's one parser: bad ones are
// usage errors (exit 2) that show how to call the command; good ones reach the build.

import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");

async function cli(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("opencomputer build / doctor arguments", () => {
  it("refuses an unknown option, a stray argument and a bad --load-timeout with exit 2", async () => {
    const unknown = await cli(["doctor", "--nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Usage: opencomputer doctor [--dir DIR]");
    const stray = await cli(["build", "extra"]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('Unexpected argument "extra"');
    const timeout = await cli(["build", "--load-timeout", "soon"]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain(
      '--load-timeout must be a positive number of seconds; got "soon"',
    );
  });

  it("checks a project with the options given", async () => {
    const ok = await cli([
      "doctor",
      "--dir",
      join(repo, "examples/support"),
      "--load-timeout",
      "60",
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("support: ok (1 tools)");
  });
});
