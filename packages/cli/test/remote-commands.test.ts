import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { remoteCommand } from "../src/commands/remote/index.ts";
import { type DevServer, startDev } from "./dev-server.ts";

let dev: DevServer | undefined;
let server: { url: string; key: string };
const savedEnv = { url: process.env.OPENCOMPUTER_API_URL, key: process.env.OPENCOMPUTER_API_KEY };

beforeAll(async () => {
  dev = await startDev("remote");
  server = { url: dev.url, key: dev.key };
}, 20_000);

afterAll(() => {
  dev?.stop();
  restoreEnv("OPENCOMPUTER_API_URL", savedEnv.url);
  restoreEnv("OPENCOMPUTER_API_KEY", savedEnv.key);
});

function restoreEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** Runs remoteCommand in-process with the server's env; captures stdout and stderr. */
async function run(
  group: string,
  argv: string[],
  env: { url?: string; key?: string } = server,
): Promise<{ code: number; stdout: string; stderr: string }> {
  restoreEnv("OPENCOMPUTER_API_URL", env.url);
  restoreEnv("OPENCOMPUTER_API_KEY", env.key);
  let stdout = "";
  let stderr = "";
  const outSpy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const errSpy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await remoteCommand(group, argv);
    return { code, stdout, stderr };
  } finally {
    outSpy.mockRestore();
    errSpy.mockRestore();
  }
}

const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seq: number; type: string; turnId?: string });

describe("remote commands", () => {
  it("creates, sends, tails, inspects, lists, reads results and ends a session", async () => {
    const created = await run("session", [
      "create",
      "--agent",
      "support@development",
      "--label",
      "case=c-1",
    ]);
    expect(created).toMatchObject({ code: 0, stderr: "" });
    const sessionId = created.stdout.trim();
    expect(sessionId).toMatch(/^ses_/);

    const sent = await run("session", ["send", sessionId, "Where", "is", "A1?"]);
    expect(sent.code).toBe(0);
    const turnId = sent.stdout.trim();
    expect(turnId).not.toBe("");

    let turns: Array<{ id: string; status: string }> = [];
    for (let i = 0; i < 100; i++) {
      const inspected = await run("session", ["inspect", sessionId, "--json"]);
      expect(inspected.code).toBe(0);
      turns = (JSON.parse(inspected.stdout) as { turns: typeof turns }).turns;
      if (turns[0]?.status === "completed") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(turns).toEqual([expect.objectContaining({ id: turnId, status: "completed" })]);

    const tailed = await run("sessions", ["tail", sessionId, "--no-follow", "--json"]);
    expect(tailed.code).toBe(0);
    const events = lines(tailed.stdout);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => e.type)).toContain("turn.completed");

    const after = await run("sessions", [
      "tail",
      sessionId,
      "--no-follow",
      "--json",
      "--after",
      "3",
    ]);
    expect(lines(after.stdout).map((e) => e.seq)).toEqual(events.slice(3).map((e) => e.seq));

    const readable = await run("sessions", ["tail", sessionId, "--no-follow"]);
    expect(readable.stdout).toMatch(/turn\.completed/);

    const inspected = await run("session", ["inspect", sessionId]);
    expect(inspected.stdout).toMatch(/status\s+idle/);
    expect(inspected.stdout).toContain(turnId);

    const listed = await run("session", ["list", "--agent", "support", "--limit", "5", "--json"]);
    expect(listed.code).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { sessions: Array<{ id: string }> }).sessions.map(
      (s) => s.id,
    );
    expect(ids).toContain(sessionId);
    expect((await run("session", ["list"])).stdout).toContain(sessionId);

    const results = await run("results", ["list", sessionId, "--turn", turnId, "--json"]);
    expect(results.code).toBe(0);
    expect(Array.isArray((JSON.parse(results.stdout) as { results: unknown[] }).results)).toBe(
      true,
    );

    const approvals = await run("approvals", ["list", sessionId, "--json"]);
    expect(approvals).toMatchObject({ code: 0, stdout: '{"approvals":[]}\n' });

    const ended = await run("session", ["end", sessionId]);
    expect(ended).toMatchObject({ code: 0, stdout: `session ${sessionId} ended\n` });

    // Following stops by itself at session.ended, continuing from the cursor.
    const last = events.at(-1)!.seq;
    const followed = await run("sessions", ["tail", sessionId, "--json", "--after", String(last)]);
    expect(followed.code).toBe(0);
    const rest = lines(followed.stdout);
    expect(rest[0]?.seq).toBe(last + 1);
    expect(rest.map((e) => e.seq)).toEqual(rest.map((_, i) => last + 1 + i));
    expect(rest.at(-1)?.type).toBe("session.ended");

    const again = await run("session", ["send", sessionId, "more"]);
    expect(again).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error session_ended: /),
    });
  }, 30_000);

  it("keeps following until SIGINT, then exits 0 and removes its handlers", async () => {
    const created = await run("session", ["create", "--agent", "support@development"]);
    const sessionId = created.stdout.trim();
    const before = process.listenerCount("SIGINT");
    const tail = run("sessions", ["tail", sessionId, "--json"]);
    await new Promise((r) => setTimeout(r, 700));
    process.emit("SIGINT");
    const tailed = await tail;
    expect(tailed.code).toBe(0);
    expect(lines(tailed.stdout)[0]).toMatchObject({ seq: 1, type: "session.created" });
    expect(process.listenerCount("SIGINT")).toBe(before);
    await run("session", ["end", sessionId]);
  });

  it("reports API errors with exit 1 and usage errors with exit 2", async () => {
    const missing = await run("session", ["inspect", "ses_nope"]);
    expect(missing).toMatchObject({ code: 1, stdout: "" });
    expect(missing.stderr).toMatch(/^error not_found: /);
    expect((await run("sessions", ["tail", "ses_nope", "--no-follow"])).code).toBe(1);
    expect((await run("results", ["get", "ses_nope", "res_nope"])).stderr).toMatch(/not_found/);

    const badKey = await run("session", ["list"], { url: server.url, key: "wrong" });
    expect(badKey).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error unauthorized/) });

    const noUrl = await run("session", ["list"], { key: server.key });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/^error usage: .*OPENCOMPUTER_API_URL/);

    expect((await run("session", ["send", "ses_x"])).code).toBe(2);
    expect((await run("session", ["send", "ses_x", "hi", "--mode", "loud"])).code).toBe(2);
    expect((await run("session", ["create"])).code).toBe(2);
    expect((await run("sessions", ["tail"])).code).toBe(2);
    expect((await run("sessions", ["tail", "x", "--bogus"])).code).toBe(2);
    expect((await run("approvals", ["maybe"])).code).toBe(2);
  });
});
