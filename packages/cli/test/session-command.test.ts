import { execFile } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
// Inside the repository so the project's `@opencomputer/agent` import resolves as a user's would.
const project = join(repo, "test-output", `cli-${process.pid}`);

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, ...env },
      cwd: project,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

beforeAll(() => {
  mkdirSync(project, { recursive: true });
  cpSync(join(repo, "examples/support/opencomputer"), join(project, "opencomputer"), {
    recursive: true,
  });
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe("opencomputer session", () => {
  it("runs a turn on the scripted model, prints its events and exits 0", async () => {
    const { code, stdout } = await cli(["session", "Where is my order A1?"], {
      OPENCOMPUTER_MODEL: "script/demo",
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/tool\.started\s+lookup_order \{"orderId":"A1"\}/);
    expect(stdout).toMatch(
      /tool\.completed\s+lookup_order → \{"orderId":"A1","status":"processing"\}/,
    );
    expect(stdout).toMatch(/turn completed/);
  });

  it("prints NDJSON with --json, seqs from 1 without gaps", async () => {
    const { code, stdout } = await cli(["session", "--json", "Where is A1?"], {
      OPENCOMPUTER_MODEL: "script/demo",
    });
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const events = lines.filter((l) => typeof l.seq === "number");
    expect(events.map((e) => e.seq)).toEqual(events.map((_: unknown, i: number) => i + 1));
    expect(events[0].type).toBe("session.created");
    expect(lines.at(-1)).toMatchObject({ type: "session.summary", turn: "completed" });
  });

  it("exits 1 with the failure when the turn fails", async () => {
    writeFileSync(
      join(project, "opencomputer/scripts/down.json"),
      JSON.stringify({ steps: [{ error: { status: 503, message: "down" } }] }),
    );
    const { code, stdout } = await cli(["session", "hi"], { OPENCOMPUTER_MODEL: "script/down" });
    expect(code).toBe(1);
    expect(stdout).toMatch(/turn failed \(model_unavailable/);
  });

  it("exits 2 on usage errors", async () => {
    expect((await cli(["session"])).code).toBe(2);
    expect((await cli(["session", "--nope", "x"])).code).toBe(2);
    expect((await cli(["frobnicate"])).code).toBe(2);
    const noAgent = await cli(["session", "--dir", "/nonexistent-dir", "x"]);
    expect(noAgent.code).toBe(2);
    expect(noAgent.stderr).toMatch(/No agents in/);
  });
});
