import { spawn } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./dev-server.ts";

const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const fixture = join(import.meta.dirname, "fixtures/desk");

/** Runs `opencomputer session --interactive --json …` with `answers` piped on stdin. */
function oneShot(
  args: string[],
  answers: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, "session", "--interactive", "--json", ...args], {
    env: { ...process.env, OPENCOMPUTER_MODEL: "script/desk", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => {
    stdout += String(c);
  });
  child.stderr.on("data", (c) => {
    stderr += String(c);
  });
  child.stdin.end(answers);
  return new Promise((done) => child.once("exit", (code) => done({ code, stdout, stderr })));
}

interface Line {
  type: string;
  seq?: number;
  data?: Record<string, unknown>;
  turn?: string;
  question?: unknown;
  pendingApprovals?: string[];
}

/** The question, its answer by number, the card, its approval and the apply's outcome. */
function expectAnsweredAndApplied(out: { code: number | null; stdout: string; stderr: string }) {
  expect(out.code, out.stderr).toBe(0);
  const lines = out.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
  const events = lines.filter((l) => l.seq !== undefined);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const types = events.map((e) => e.type);
  expect(types).toContain("question.asked");
  const received = events.filter((e) => e.type === "message.received");
  expect(received[1]!.data!.input).toMatchObject({
    answer: { value: "B2", text: "Order B2" },
  });
  expect(types.indexOf("question.answered")).toBeGreaterThan(types.indexOf("question.asked"));
  expect(types).toContain("approval.requested");
  expect(types).toContain("approval.decided");
  const applied = events.find((e) => e.type === "approval.applied");
  expect(applied).toBeDefined();
  expect(out.stderr).toContain("Which order should I refund?");
  expect(out.stderr).toContain("2) Order B2");
  expect(out.stderr).toContain("Refund order B2");
  expect(out.stderr).toContain("Amount: $20.00");
  expect(out.stderr).toMatch(/approval apr_\S+: applied/);
  const summary = lines.at(-1)!;
  expect(summary).toMatchObject({ type: "session.summary", turn: "completed", question: null });
  expect(summary.pendingApprovals).toEqual([]);
}

describe('opencomputer session "text" answering from the keyboard', () => {
  let dev: DevServer | undefined;
  const project = join(repo, "test-output", `desk-embedded-${process.pid}`);
  afterAll(() => {
    dev?.stop();
    rmSync(project, { recursive: true, force: true });
  });

  it("embedded: answers a question with an option number and approves the card", async () => {
    mkdirSync(project, { recursive: true });
    cpSync(join(fixture, "opencomputer"), join(project, "opencomputer"), { recursive: true });
    const out = await oneShot(["--dir", project, "refund please"], "7\n2\nmaybe\ny\n", {
      OPENCOMPUTER_API_URL: "",
    });
    // "7" names no option and "maybe" is not y/n: both are asked again, then 2 and y are taken.
    expectAnsweredAndApplied(out);
    expect(out.stderr).toContain("there is no option 7");
  }, 90_000);

  it("over HTTP (OPENCOMPUTER_API_URL): the same conversation against opencomputer dev", async () => {
    dev = await startDev("desk-remote", fixture, "script/desk");
    const out = await oneShot(["refund please"], "2\ny\n", {
      OPENCOMPUTER_API_URL: dev.url,
      OPENCOMPUTER_API_KEY: dev.key,
    });
    expectAnsweredAndApplied(out);
  }, 90_000);

  it("embedded: a denied card is reported denied and nothing is applied", async () => {
    const out = await oneShot(["--dir", project, "refund please"], "1\nn\n", {
      OPENCOMPUTER_API_URL: "",
    });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(/approval apr_\S+: denied/);
    const types = out.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as Line).type);
    expect(types).toContain("approval.decided");
    expect(types).not.toContain("approval.applied");
    expect(types).not.toContain("approval.applying");
  }, 90_000);

  it("without a keyboard leaves the question open and says so", async () => {
    const out = await oneShot(["--no-interactive", "--dir", project, "refund please"], "", {
      OPENCOMPUTER_API_URL: "",
    });
    expect(out.code, out.stderr).toBe(0);
    const summary = JSON.parse(out.stdout.trim().split("\n").at(-1)!) as Line;
    expect(summary.question).toMatchObject({ text: "Which order should I refund?" });
  }, 90_000);
});
