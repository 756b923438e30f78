// `opencomputer session attach <id>` follows an existing session and answers what it asks from
// piped keystrokes; a mistyped subcommand is refused instead of being sent to the model.

import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../src/client.ts";
import { type DevServer, startDev } from "./dev-server.ts";

const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const fixture = join(import.meta.dirname, "fixtures/desk");
let dev: DevServer;

beforeAll(async () => {
  dev = await startDev("attach", fixture, "script/desk");
}, 60_000);
afterAll(() => dev?.stop());

function cli(args: string[], stdin = "") {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, OPENCOMPUTER_API_URL: dev.url, OPENCOMPUTER_API_KEY: dev.key },
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
  child.stdin.end(stdin);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
    child.once("exit", (code) => done({ code, stdout, stderr })),
  );
}

describe("session attach", () => {
  it("follows a session created with a first message and answers its question and card", async () => {
    const created = await cli([
      "session",
      "create",
      "--agent",
      "desk@development",
      "refund please",
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^ses_/);
    const attached = await cli(["session", "attach", id, "--interactive", "--json"], "2\ny\n");
    expect(attached.code, attached.stderr).toBe(0);
    const events = attached.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { seq: number; type: string; data: Record<string, unknown> });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.type);
    expect(types).toContain("question.answered");
    expect(types).toContain("approval.applied");
    // Only the message given at create went to the model as text: attach sent answers only.
    const received = events.filter((e) => e.type === "message.received");
    const inputs = received.map((e) => e.data.input as { text?: string; answer?: unknown });
    expect(inputs[0]?.text).toBe("refund please");
    expect(inputs[1]).toMatchObject({ answer: { value: "B2", text: "Order B2" } });
    expect(inputs[1]?.text).toBeUndefined();
    expect(inputs).toHaveLength(2);
    expect(attached.stderr).toContain("Which order should I refund?");
    expect(attached.stderr).toMatch(/approval apr_\S+: applied/);
  }, 120_000);

  it("refuses a mistyped subcommand and starts no session", async () => {
    const api = new ApiClient({ url: dev.url, key: dev.key });
    const before = (await api.get<{ sessions: unknown[] }>("/sessions")).sessions.length;
    const typo = await cli(["session", "atach", "ses_123"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("Did you mean `opencomputer session attach …`?");
    expect(typo.stderr).toContain('opencomputer session "atach ses_123"');
    const help = await cli(["session", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("session attach <id>");
    expect(help.stdout).toContain("e.g.");
    expect((await api.get<{ sessions: unknown[] }>("/sessions")).sessions.length).toBe(before);
  }, 60_000);
});
