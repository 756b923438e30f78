// `opencomputer webhooks …` and `opencomputer schedules …` against `opencomputer dev` on a
// project with a schedule: the dev server runs the scheduler and serves the webhook ingress.
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { remoteCommand } from "../src/commands/remote/index.ts";
import { type DevServer, startDev } from "./dev-server.ts";

let dev: DevServer | undefined;
const saved = { url: process.env.OPENCOMPUTER_API_URL, key: process.env.OPENCOMPUTER_API_KEY };

beforeAll(async () => {
  dev = await startDev("triggers", join(resolve(import.meta.dirname), "fixtures/scheduled"));
  process.env.OPENCOMPUTER_API_URL = dev.url;
  process.env.OPENCOMPUTER_API_KEY = dev.key;
}, 30_000);

afterAll(() => {
  dev?.stop();
  for (const [name, value] of [
    ["OPENCOMPUTER_API_URL", saved.url],
    ["OPENCOMPUTER_API_KEY", saved.key],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function run(group: string, argv: string[]) {
  let stdout = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const errSpy = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    return { code: await remoteCommand(group, argv), stdout };
  } finally {
    spy.mockRestore();
    errSpy.mockRestore();
  }
}

describe("webhooks and schedules commands", () => {
  it("creates a webhook whose printed URL starts a session, then disables, rotates and removes it", async () => {
    const created = await run("webhooks", [
      "create",
      "ci",
      "--agent",
      "hygiene",
      "--environment",
      "development",
    ]);
    expect(created.code).toBe(0);
    const url = /URL \(shown once, it carries the token\): (\S+)/.exec(created.stdout)?.[1];
    expect(url).toMatch(/\/agent-webhooks\/wh_[0-9a-z]+\/ocwh_/);
    const id = /^(wh_\S+)/.exec(created.stdout)![1]!;
    const listed = await run("webhooks", ["list", "--json"]);
    expect(JSON.parse(listed.stdout).webhooks).toEqual([
      expect.objectContaining({ id, enabled: true }),
    ]);
    expect(listed.stdout).not.toContain(url!.split("/").pop());
    const posted = await fetch(url!, {
      method: "POST",
      body: JSON.stringify({ text: "Check CI." }),
    });
    expect(posted.status).toBe(202);
    expect(((await posted.json()) as { sessionId: string }).sessionId).toMatch(/^ses_/);
    expect((await run("webhooks", ["disable", id])).stdout).toContain("disabled");
    expect((await fetch(url!, { method: "POST", body: "{}" })).status).toBe(403);
    const rotated = await run("webhooks", ["rotate-token", id]);
    expect(rotated.stdout).toMatch(/ocwh_/);
    expect((await run("webhooks", ["enable", id])).stdout).toContain("enabled");
    expect((await fetch(url!, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await run("webhooks", ["requests", id])).stdout).toMatch(/accepted/);
    expect((await run("webhooks", ["remove", id])).code).toBe(0);
    expect((await run("webhooks", ["enable", id])).code).toBe(1);
  });

  it("lists the deployed schedule, runs it now and shows the run in its history", async () => {
    const listed = await run("schedules", ["list"]);
    expect(listed.stdout).toContain(
      'hygiene/weekday-hygiene  "0 9 * * 1-5" America/Los_Angeles  recurs in: production',
    );
    const ran = await run("schedules", [
      "run",
      "hygiene/weekday-hygiene",
      "--environment",
      "development",
      "--json",
    ]);
    expect(ran.code).toBe(0);
    const { run: scheduled } = JSON.parse(ran.stdout);
    expect(scheduled).toMatchObject({ manual: true, environment: "development" });
    const history = await run("schedules", ["history", "hygiene/weekday-hygiene", "--json"]);
    expect(JSON.parse(history.stdout).runs.map((r: { id: string }) => r.id)).toEqual([
      scheduled.id,
    ]);
    expect((await run("schedules", ["run", "hygiene"])).code).toBe(2);
  });
});
