// Which isolation the build picks for project code (the same choice `opencomputer dev`/`server`
// make for workers), and that the command says so when it is less than the sandbox.

import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapAvailable } from "@opencomputer/workers";
import { afterAll, describe, expect, it } from "vitest";
import { buildIsolation, type CommandIO, runBuildCommand, UNPRIVILEGED_ID } from "../src/index.ts";
import { copyFixture } from "./helpers.ts";

const ROOT = process.getuid?.() === 0;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A project whose parent directory has `mode` (0700: uid 65534 cannot reach the project). */
function project(mode: number): string {
  const dir = mkdtempSync(join(tmpdir(), "oc-build-iso-"));
  dirs.push(dir);
  const inner = join(dir, "project");
  mkdirSync(inner);
  chmodSync(dir, mode);
  return inner;
}

describe("the build's isolation for project code", () => {
  it.runIf(bwrapAvailable())(
    "is the bubblewrap sandbox by default where it can reach the project",
    () => {
      const isolation = buildIsolation(project(0o755), {});
      expect(isolation.kind).toBe("sandbox");
      expect(isolation.launcher).toBeTypeOf("function");
    },
  );

  it("without the sandbox, a root build drops to uid 65534 when the project allows", () => {
    const isolation = buildIsolation(project(0o755), { OPENCOMPUTER_SANDBOX: "0" });
    expect(isolation.kind).toBe("process");
    expect(isolation.launcher).toBeUndefined();
    expect(isolation.uid).toBe(ROOT ? UNPRIVILEGED_ID : undefined);
    expect(isolation.description).toContain("OPENCOMPUTER_SANDBOX=0");
  });

  it.runIf(ROOT)(
    "and says plainly that it runs as root when uid 65534 cannot reach the project",
    () => {
      const dir = project(0o700);
      const isolation = buildIsolation(dir, {});
      expect(isolation.kind).toBe("process");
      expect(isolation.uid).toBeUndefined();
      expect(isolation.description).toContain("is not searchable by other users");
      expect(isolation.description).toContain("AS ROOT");
    },
  );

  it("a project directory that does not exist is the build's error, not the isolation's", async () => {
    const missing = join(project(0o755), "nope");
    expect(buildIsolation(missing, {}).kind).toBe(bwrapAvailable() ? "sandbox" : "process");
    let stderr = "";
    const io: CommandIO = {
      stdout: () => {},
      stderr: (text) => {
        stderr += text;
      },
    };
    expect(await runBuildCommand({ doctor: true, dir: missing }, io)).toBe(1);
    expect(stderr).toContain("agent_not_found");
  });

  it("build and doctor print a warning naming the isolation when it is not the sandbox", async () => {
    const fixture = copyFixture("check-url");
    dirs.push(fixture.dir);
    const saved = process.env.OPENCOMPUTER_SANDBOX;
    process.env.OPENCOMPUTER_SANDBOX = "0";
    try {
      for (const doctor of [true, false]) {
        let stderr = "";
        const io: CommandIO = {
          stdout: () => {},
          stderr: (text) => {
            stderr += text;
          },
        };
        expect(await runBuildCommand({ doctor, dir: fixture.dir }, io)).toBe(0);
        expect(stderr).toContain(
          "warning: project code loaded without a sandbox (OPENCOMPUTER_SANDBOX=0)",
        );
      }
    } finally {
      if (saved === undefined) delete process.env.OPENCOMPUTER_SANDBOX;
      else process.env.OPENCOMPUTER_SANDBOX = saved;
    }
  }, 60_000);
});
