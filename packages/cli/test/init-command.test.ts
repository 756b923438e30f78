// `opencomputer init`: the files it writes make a project that `doctor` accepts and that runs a
// session on the scripted model at once; the SDK dependency is the npm alias of our published
// package; an existing project (or any file init would write) is refused with nothing written.

import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { aliasSpec, publishedName } from "../src/commands/init/package-names.ts";
import { initProject } from "../src/commands/init.ts";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const version = (
  JSON.parse(readFileSync(join(repo, "packages/cli/package.json"), "utf8")) as {
    version: string;
  }
).version;

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let parent: string;
beforeEach(async () => {
  // Inside the repository, so the scaffold's `@opencomputer/agent` resolves to the workspace.
  mkdirSync(join(repo, "test-output"), { recursive: true });
  parent = await mkdtemp(join(repo, "test-output", "init-"));
});
afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe("opencomputer init", () => {
  it("writes a project that doctor accepts and that runs a session on the scripted model", async () => {
    const init = await cli(["init", join(parent, "My Project"), "--agent", "helper"]);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("npx opencomputer dev");
    expect(init.stdout).toContain("npx opencomputer session");
    const dir = join(parent, "My Project");
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(manifest.name).toBe("my-project");
    expect(manifest.dependencies).toEqual({
      "@opencomputer/agent": `npm:opencomputer-runtime-agent@${version}`,
      "opencomputer-runtime": version,
    });
    expect(readFileSync(join(dir, "opencomputer/project.ts"), "utf8")).toContain(
      'name: "my-project",\n  agents: ["helper"],',
    );
    expect(readFileSync(join(dir, ".gitignore"), "utf8").split("\n")).toEqual(
      expect.arrayContaining([".opencomputer/", ".env.local"]),
    );

    const doctor = await cli(["doctor", "--dir", dir]);
    expect(doctor.stdout).toContain("helper: ok (2 tools, result tool report)");
    expect(doctor.code).toBe(0);
    const session = await cli(["session", "--dir", dir, "--json", "Count: a b c"], {
      OPENCOMPUTER_MODEL: "script/demo",
    });
    expect(session.code).toBe(0);
    const lines = session.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.some((e) => e.type === "tool.completed")).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      type: "session.summary",
      turn: "completed",
      result: { data: { words: 4, summary: "The text has 4 words." } },
    });
  });

  it("refuses a directory with a project or with a file it would write, writing nothing", async () => {
    const withProject = join(parent, "a");
    mkdirSync(join(withProject, "opencomputer"), { recursive: true });
    expect(() => initProject(withProject)).toThrow(
      expect.objectContaining({
        code: "project_exists",
        message: expect.stringContaining("opencomputer/"),
      }),
    );
    expect(readdirSync(withProject)).toEqual(["opencomputer"]);

    const withManifest = join(parent, "b");
    mkdirSync(withManifest);
    writeFileSync(join(withManifest, "package.json"), "{}\n");
    expect(() => initProject(withManifest)).toThrow(
      expect.objectContaining({
        code: "project_exists",
        details: { path: join(withManifest, "package.json") },
      }),
    );
    expect(readdirSync(withManifest)).toEqual(["package.json"]);
    expect(readFileSync(join(withManifest, "package.json"), "utf8")).toBe("{}\n");

    const again = await cli(["init", withManifest]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error project_exists: .*package\.json/);
  });

  it("refuses a bad name, agent id or extra argument", async () => {
    expect(() => initProject(join(parent, "c"), { name: "Bad Name" })).toThrow(
      expect.objectContaining({ code: "init_name_invalid" }),
    );
    expect(() => initProject(join(parent, "c"), { agent: "../x" })).toThrow(
      expect.objectContaining({ code: "init_agent_invalid" }),
    );
    expect(existsSync(join(parent, "c"))).toBe(false);
    const extra = await cli(["init", "a", "b"]);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('Unexpected argument "b"');
  });

  it("names the published packages, aliased to the names agent code imports", () => {
    expect(publishedName("@opencomputer/agent")).toBe("opencomputer-runtime-agent");
    expect(publishedName("opencomputer")).toBe("opencomputer-runtime");
    expect(aliasSpec("@opencomputer/protocol", "1.2.3")).toBe(
      "npm:opencomputer-runtime-protocol@1.2.3",
    );
    expect(() => publishedName("react")).toThrow(/not one of this project's packages/);
  });
});
