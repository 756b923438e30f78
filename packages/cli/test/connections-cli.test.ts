// The CLI end to end with the billing example: `secrets set|list|remove`, a build that records
// the connection in the deployment, and a one-shot session whose tool calls a loopback origin
// through the egress gateway. The secret must reach the origin and appear in no output.

import { spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const project = join(repo, "test-output", `connections-cli-${process.pid}`);
const SECRET = "sk_cli_3b9e_keep_it_secret";
const received: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
let origin: Server;
let originUrl: string;

function cli(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [bin, ...args, "--dir", project], {
      env: {
        ...process.env,
        OPENCOMPUTER_MODEL: "script/demo",
        BILLING_API_ORIGIN: originUrl,
        OPENCOMPUTER_AGENT_ENV: "BILLING_API_ORIGIN",
        ...options.env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += String(c)));
    child.stderr.on("data", (c) => (stderr += String(c)));
    child.stdin.end(options.input ?? "");
    child.on("exit", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

beforeAll(async () => {
  mkdirSync(project, { recursive: true });
  cpSync(join(repo, "examples/billing/opencomputer"), join(project, "opencomputer"), {
    recursive: true,
  });
  origin = createServer((req, res) => {
    received.push({ url: req.url ?? "", headers: req.headers });
    req.resume();
    res.writeHead(201, { "content-type": "application/json" }).end('{"id":"ch_1"}');
  });
  await new Promise<void>((r) => origin.listen(0, "127.0.0.1", () => r()));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => origin.close(() => r()));
  rmSync(project, { recursive: true, force: true });
});

// Each CLI start is seconds on a busy machine; these tests run several.
describe("opencomputer secrets", { timeout: 300_000 }, () => {
  it("sets from stdin, lists names and dates only, keeps the value encrypted", async () => {
    const set = await cli(["secrets", "set", "BILLING_API_KEY"], { input: `${SECRET}\n` });
    expect(set).toMatchObject({
      code: 0,
      stdout: "set BILLING_API_KEY (development), any origin\n",
    });
    const again = await cli(["secrets", "set", "BILLING_API_KEY", "--environment", "production"], {
      input: "other",
    });
    expect(again.stdout).toBe("set BILLING_API_KEY (production), any origin\n");
    const list = await cli(["secrets", "list", "--json"]);
    const rows = JSON.parse(list.stdout) as Array<Record<string, string>>;
    expect(rows).toEqual([
      {
        name: "BILLING_API_KEY",
        environment: "development",
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        origins: [],
      },
    ]);
    const text = await cli(["secrets", "list"]);
    for (const out of [set, again, list, text])
      expect(out.stdout + out.stderr).not.toContain(SECRET);
    const dir = join(project, ".opencomputer");
    expect(readFileSync(join(dir, "secrets.json"), "utf8")).not.toContain(SECRET);
    expect(statSync(join(dir, "secret.key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "secrets.json")).mode & 0o777).toBe(0o600);
  });

  it("refuses bad names and environments with the field named", async () => {
    const bad = await cli(["secrets", "set", "billing-key"], { input: "x" });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("secret_name_invalid");
    const env = await cli(["secrets", "list", "--environment", "staging"]);
    expect(env.stderr).toContain("secret_environment_invalid");
    const empty = await cli(["secrets", "set", "EMPTY_ONE"], { input: "" });
    expect(empty.stderr).toContain("secret_value_invalid");
  });
});

describe("a session calling a connection", { timeout: 300_000 }, () => {
  it("records the connection in the deployment, with the secret's name only", async () => {
    const { stdout, code } = await cli(["build", "--json"]);
    expect(code).toBe(0);
    const deployments = join(project, ".opencomputer", "deployments");
    const dep = readdirSync(deployments).find((d) => d.startsWith("dep_"))!;
    const manifest = JSON.parse(readFileSync(join(deployments, dep, "deployment.json"), "utf8"));
    expect(manifest.connections).toEqual([
      {
        id: "billing_api",
        origin: originUrl,
        headers: { authorization: { secret: "BILLING_API_KEY", prefix: "Bearer " } },
        methods: ["GET", "POST"],
        pathPrefix: "/v1",
      },
    ]);
    expect(stdout).not.toContain(SECRET);
  });

  it("the secret reaches the origin and no output", async () => {
    const before = received.length;
    const { code, stdout, stderr } = await cli(["session", "--json", "Charge cus_1 5.00"]);
    expect(code, stderr).toBe(0);
    const hit = received[before]!;
    expect(hit.url).toBe("/v1/charges");
    expect(hit.headers.authorization).toBe(`Bearer ${SECRET}`);
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const types = events.map((e) => e.type);
    expect(types).toContain("egress.request");
    const response = events.find((e) => e.type === "egress.response");
    expect(response.data).toMatchObject({
      connectionId: "billing_api",
      method: "POST",
      path: "/v1/charges",
      status: 201,
    });
    // The idempotency key is derived from the session and the call.
    const started = events.find((e) => e.type === "tool.started");
    const session = events.find((e) => e.type === "session.created").sessionId;
    expect(hit.headers["idempotency-key"]).toBe(`${session}:${started.data.callId}`);
    expect(stdout + stderr).not.toContain(SECRET);
    expect(
      readFileSync(join(project, ".opencomputer", "data.db")).toString("latin1"),
    ).not.toContain(SECRET);
  });

  it("development secrets also come from opencomputer/.env.local", async () => {
    const removed = await cli(["secrets", "remove", "BILLING_API_KEY"]);
    expect(removed.stdout).toBe("removed BILLING_API_KEY (development)\n");
    const missing = await cli(["session", "--json", "Charge cus_1 5.00"]);
    expect(missing.stdout).toContain("BILLING_API_KEY is not set for the development environment");
    writeFileSync(
      join(project, "opencomputer", ".env.local"),
      `OTHER=1\nBILLING_API_KEY="${SECRET}_env"\n`,
    );
    const before = received.length;
    const ok = await cli(["session", "--json", "Charge cus_1 5.00"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(received[before]!.headers.authorization).toBe(`Bearer ${SECRET}_env`);
    expect(ok.stdout).not.toContain(SECRET);
  });
});
