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

  it("builds first: a deployment the load-time check refuses fails the turn naming the tool", async () => {
    const dir = join(project, "mutating");
    cpSync(
      join(repo, "packages/build/test/fixtures/mutating-schema/opencomputer"),
      join(dir, "opencomputer"),
      {
        recursive: true,
      },
    );
    mkdirSync(join(dir, "opencomputer/scripts"), { recursive: true });
    writeFileSync(
      join(dir, "opencomputer/scripts/check.json"),
      JSON.stringify({
        steps: [
          { toolCalls: [{ name: "check_url", input: { url: "https://x" } }] },
          { text: "ok" },
        ],
      }),
    );
    const { code, stdout } = await cli(["session", "--dir", dir, "--json", "check x"], {
      OPENCOMPUTER_MODEL: "script/check",
    });
    expect(code).toBe(1);
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const failed = events.find((e) => e.type === "turn.failed");
    expect(failed.data).toMatchObject({ code: "deployment_invalid", tool: "check_url" });
    expect(failed.data.message).toContain('tool "check_url"');
    expect(events.some((e) => e.type === "tool.started" || e.type === "agent.rendered")).toBe(
      false,
    );
  });

  it("reports build errors as file:line:column and runs nothing", async () => {
    const dir = join(project, "broken");
    mkdirSync(join(dir, "opencomputer/agents/bad"), { recursive: true });
    writeFileSync(
      join(dir, "opencomputer/agents/bad/agent.ts"),
      [
        'import { defineTool, useTool } from "@opencomputer/agent";',
        'export const a = defineTool({ name: "a", description: "A", output: { type: "object" }, result: true, run: () => ({}) });',
        'export const b = defineTool({ name: "b", description: "B", output: { type: "object" }, result: true, run: () => ({}) });',
        'export default function Agent() { useTool(a); useTool(b); return "x"; }',
        "",
      ].join("\n"),
    );
    const { code, stderr } = await cli(["session", "--dir", dir, "hi"], {
      OPENCOMPUTER_MODEL: "script/demo",
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/opencomputer\/agents\/bad\/agent\.ts:\d+:\d+: result_tool_conflict/);
    const doctor = await cli(["doctor", "--dir", dir, "--json"]);
    expect(doctor.code).toBe(1);
    expect(JSON.parse(doctor.stdout)[0]).toMatchObject({
      code: "result_tool_conflict",
      line: expect.any(Number),
      column: expect.any(Number),
    });
  });

  it("gives agents the sandboxed shell: a command runs in /workspace and its output reaches the log", async () => {
    const dir = join(project, "shell");
    mkdirSync(join(dir, "opencomputer/agents/ops"), { recursive: true });
    mkdirSync(join(dir, "opencomputer/scripts"), { recursive: true });
    writeFileSync(
      join(dir, "opencomputer/agents/ops/agent.ts"),
      [
        'import { useModel, useTool } from "@opencomputer/agent";',
        "export default function Agent() {",
        '  useModel("anthropic/claude-sonnet-4.6");',
        '  useTool("sandbox_exec");',
        '  return "Use the sandbox for shell commands and keep durable work in /workspace.";',
        "}",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "opencomputer/scripts/sh.json"),
      JSON.stringify({
        steps: [
          {
            toolCalls: [
              {
                name: "sandbox_exec",
                input: { command: "echo hello > notes.txt && cat /workspace/notes.txt && pwd" },
              },
            ],
          },
          { text: "done" },
        ],
      }),
    );
    const { code, stdout } = await cli(["session", "--dir", dir, "--json", "write a note"], {
      OPENCOMPUTER_MODEL: "script/sh",
    });
    expect(code).toBe(0);
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const completed = events.find((e) => e.type === "tool.completed");
    expect(completed.data.output).toMatchObject({ exitCode: 0, stdout: "hello\n/workspace\n" });
    const started = events.find((e) => e.type === "runtime.started");
    expect(started.data).toMatchObject({ generation: 1, expiresAt: expect.any(String) });
    expect(started.seq).toBeLessThan(completed.seq);
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
