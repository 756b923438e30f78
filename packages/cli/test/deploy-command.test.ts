// `opencomputer deploy` and `rollback` from a project on "a laptop" (a directory here) to a
// server started in the test (`opencomputer server`, whose directory has no agent sources):
// the first deploy sets both aliases, a production deploy moves production, a rollback moves
// it back, an unchanged deploy uploads nothing, and sessions stay on the deployment they began
// on. `login`/`link` let the same commands run with no environment variables.

import { type ChildProcess, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ApiClient } from "../src/client.ts";
import { linkCommand, loginCommand } from "../src/commands/login.ts";
import { main } from "../src/main.ts";

const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const base = join(repo, "test-output", `deploy-${process.pid}`);
const laptop = join(base, "laptop");
const serverDir = join(base, "server");
const config = join(base, "config");
const KEY = "oc_test_deploy_key_0123456789";
let server: ChildProcess;
let url = "";
const saved = { ...process.env };

beforeAll(async () => {
  mkdirSync(serverDir, { recursive: true });
  cpSync(join(repo, "examples/support/opencomputer"), join(laptop, "opencomputer"), {
    recursive: true,
  });
  // The scripted model reads its script from the server's project; no agent sources there.
  cpSync(
    join(repo, "examples/support/opencomputer/scripts"),
    join(serverDir, "opencomputer/scripts"),
    {
      recursive: true,
    },
  );
  server = spawn(
    process.execPath,
    [bin, "server", "--store", join(serverDir, "data.db"), "--dir", serverDir, "--port", "0"],
    {
      env: { ...process.env, OPENCOMPUTER_MODEL: "script/demo", OPENCOMPUTER_API_KEYS: KEY },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  url = await new Promise<string>((done, fail) => {
    let out = "";
    server.stdout!.on("data", (chunk) => {
      out += String(chunk);
      const found = /listening on (\S+)/.exec(out)?.[1];
      if (found) done(found);
    });
    server.stderr!.on("data", (chunk) => {
      out += String(chunk);
    });
    server.once("exit", (code) => fail(new Error(`server exited ${code}: ${out}`)));
  });
}, 60_000);

afterAll(() => {
  server?.kill("SIGKILL");
  process.env = saved;
  rmSync(base, { recursive: true, force: true });
});

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => {
    stdout += String(c);
    return true;
  });
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => {
    stderr += String(c);
    return true;
  });
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

interface Agent {
  aliases: { development: string | null; production: string | null };
  history: { alias: string; reason: string }[];
}
const api = () => new ApiClient({ url, key: KEY });
const agent = async () => (await api().get<{ agent: Agent }>("/agents/support")).agent;

/** A session on `ref` with one turn run to the end; its pinned deployment and outcome. */
async function runSession(ref: string) {
  const { session } = await api().post<{ session: { id: string } }>("/sessions", { agentId: ref });
  await api().post(`/sessions/${session.id}/turns`, { input: { text: "Where is my order A1?" } });
  for (;;) {
    const view = await api().get<{ deploymentId: string; turns: { status: string }[] }>(
      `/sessions/${session.id}`,
    );
    const status = view.turns[0]?.status;
    if (status && status !== "queued" && status !== "running") return { id: session.id, ...view };
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("deploy, aliases and rollback against a running server", () => {
  let first = "";
  let second = "";

  it("deploys, then moves production only on an explicit deploy; rolls back; pins sessions", async () => {
    process.env.OPENCOMPUTER_API_URL = url;
    process.env.OPENCOMPUTER_API_KEY = KEY;
    const deployed = await cli(["deploy", "--dir", laptop, "--json"]);
    expect(deployed.code, deployed.stderr).toBe(0);
    first = (JSON.parse(deployed.stdout.trim()) as { deploymentId: string }).deploymentId;
    expect(await agent()).toMatchObject({ aliases: { development: first, production: first } });
    const before = await runSession("support@production");
    expect(before).toMatchObject({ deploymentId: first, turns: [{ status: "completed" }] });

    // An unchanged deploy uploads nothing.
    const again = await cli(["deploy", "--dir", laptop]);
    expect(again.stdout).toContain("already on the server");

    const tool = join(laptop, "opencomputer/agents/support/tools/lookup-order.ts");
    writeFileSync(tool, readFileSync(tool, "utf8").replace("Look up", "Find"));
    const dev = await cli(["deploy", "--dir", laptop, "--json"]);
    second = (JSON.parse(dev.stdout.trim()) as { deploymentId: string }).deploymentId;
    expect(second).not.toBe(first);
    expect((await agent()).aliases).toEqual({ development: second, production: first });

    expect((await cli(["deploy", "--dir", laptop, "--alias", "production"])).code).toBe(0);
    expect((await agent()).aliases).toEqual({ development: second, production: second });
    const during = await runSession("support@production");
    expect(during.deploymentId).toBe(second);

    const back = await cli(["rollback", "support"]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain(`support@production → ${first} (was ${second})`);
    expect((await agent()).aliases.production).toBe(first);
    expect((await runSession("support@production")).deploymentId).toBe(first);
    // Sessions keep their deployment: the one started on the rolled-back build still runs it.
    await api().post(`/sessions/${during.id}/turns`, { input: { text: "And now?" } });
    const pinned = await api().get<{ deploymentId: string }>(`/sessions/${during.id}`);
    expect(pinned.deploymentId).toBe(second);
    expect((await agent()).history.map((m) => `${m.alias}:${m.reason}`)).toEqual([
      "development:deploy",
      "production:deploy",
      "development:deploy",
      "production:deploy",
      "production:rollback",
    ]);
  }, 240_000);

  it("login and link remember the server (0600), so commands need no environment", async () => {
    delete process.env.OPENCOMPUTER_API_URL;
    delete process.env.OPENCOMPUTER_API_KEY;
    process.env.OPENCOMPUTER_CONFIG_DIR = config;
    const unlinked = await cli(["rollback", "support", "--dir", laptop]);
    expect(unlinked.code).toBe(2);
    expect(unlinked.stderr).toContain("opencomputer login --url");

    const stdin = Readable.from([`${KEY}\n`]);
    const wrong = loginCommand(["--url", url], {
      stdin: Readable.from(["oc_wrong\n"]),
      stderr: { write: () => true },
    });
    await expect(wrong).rejects.toMatchObject({ code: "unauthorized" });
    expect(existsSync(join(config, "credentials.json"))).toBe(false);
    const o = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      expect(await loginCommand(["--url", url], { stdin, stderr: { write: () => true } })).toBe(0);
      expect(await linkCommand(["--dir", laptop])).toBe(0);
    } finally {
      o.mockRestore();
    }
    const file = join(config, "credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).servers)).toEqual([url]);
    const rolled = await cli(["rollback", "support", "--dir", laptop, "--to", second]);
    expect(rolled.code, rolled.stderr).toBe(0);
    expect((await agent()).aliases.production).toBe(second);
  }, 60_000);
});
