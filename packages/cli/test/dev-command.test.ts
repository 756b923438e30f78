import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const project = join(repo, "test-output", `dev-${process.pid}`);
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill("SIGKILL");
  rmSync(project, { recursive: true, force: true });
});

/** Starts `opencomputer dev` and resolves with the URL and key it prints. */
function startDev(): Promise<{ url: string; key: string }> {
  mkdirSync(project, { recursive: true });
  cpSync(join(repo, "examples/support/opencomputer"), join(project, "opencomputer"), {
    recursive: true,
  });
  child = spawn(process.execPath, [bin, "dev", "--dir", project, "--port", "0"], {
    env: { ...process.env, OPENCOMPUTER_MODEL: "script/demo", OPENCOMPUTER_API_KEY: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((done, fail) => {
    let out = "";
    child!.stdout!.on("data", (chunk) => {
      out += String(chunk);
      const url = /listening on (\S+)/.exec(out)?.[1];
      const key = /API key: (\S+)/.exec(out)?.[1];
      if (url && key) done({ url, key });
    });
    child!.once("exit", (code) => fail(new Error(`dev exited ${code}: ${out}`)));
  });
}

describe("opencomputer dev", () => {
  it("builds, serves the API with a printed key, runs a session, and stops on SIGTERM", async () => {
    const { url, key } = await startDev();
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { "x-api-key": key, "content-type": "application/json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    expect((await fetch(`${url}/sessions`)).status).toBe(401);
    const created = (await (
      await call("POST", "/sessions", { agentId: "support@development" })
    ).json()) as {
      session: { id: string };
    };
    const sessionId = created.session.id;
    expect(
      (await call("POST", `/sessions/${sessionId}/turns`, { input: { text: "Where is A1?" } }))
        .status,
    ).toBe(202);
    let types: string[] = [];
    for (let i = 0; i < 100 && !types.includes("turn.completed"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      const { events } = (await (
        await call("GET", `/sessions/${sessionId}/events?after=0`)
      ).json()) as {
        events: Array<{ type: string }>;
      };
      types = events.map((e) => e.type);
    }
    expect(types).toContain("tool.completed");
    expect(types).toContain("turn.completed");
    const exited = new Promise<number | null>((r) => child!.once("exit", r));
    child!.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
