// `opencomputer test --crash` on the ledger fixture: runtimes in child processes SIGKILLed at
// seeded kill points and resumed by fresh ones over the same store. The tool that posts without
// an idempotency key is reported by name; the one keyed by its call id passes, and every
// invariant holds for both. The ledger service counts what it received, by key.
//
// Seed 148 with two runs each tries, for the unsafe scenario (7 commits, 1 outbound request: 15
// kill points), "after commit #5" and "before commit #6": the kills between the POST reaching
// the service and the call's outcome being committed.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const dir = join(repo, "test-output", `cli-crash-${process.pid}`);

let ledger: Server;
let origin = "";
/** Body of every POST the service received, with its idempotency key. */
const received: Array<{ key: string | undefined; body: string }> = [];

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  cpSync(join(import.meta.dirname, "fixtures/ledger/opencomputer"), join(dir, "opencomputer"), {
    recursive: true,
  });
  ledger = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      received.push({ key: req.headers["idempotency-key"] as string | undefined, body });
      res.setHeader("content-type", "application/json");
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((done) => ledger.listen(0, "127.0.0.1", done));
  origin = `http://127.0.0.1:${(ledger.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((done) => ledger.close(done));
  rmSync(dir, { recursive: true, force: true });
});

async function crash(args: string[]) {
  const env = { ...process.env, LEDGER_ORIGIN: origin, OPENCOMPUTER_AGENT_ENV: "LEDGER_ORIGIN" };
  try {
    const out = await run(process.execPath, [bin, "test", "--dir", dir, "--crash", ...args], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, ...out };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("opencomputer test --crash", () => {
  it("reports the tool that posted twice without the call's key, passes the keyed one", async () => {
    const { code, stdout } = await crash([
      "--runs",
      "2",
      "--seed",
      "148",
      "--filter",
      "entry",
      "--json",
    ]);
    const report = JSON.parse(stdout);
    expect(report.seed).toBe(148);
    const [keyed, unsafe] = report.scenarios;
    expect(keyed).toMatchObject({
      name: "records an entry and reports the total",
      runs: 2,
      kills: 2,
      violations: [],
      nonIdempotent: [],
    });
    expect(unsafe).toMatchObject({
      name: "posts an entry without a key",
      runs: 2,
      kills: 2,
      violations: [],
    });
    expect(unsafe.nonIdempotent).toHaveLength(1);
    expect(unsafe.nonIdempotent[0]).toMatchObject({
      tool: "post_entry_unsafe",
      phase: "run",
      request: "POST ledger_api /entries",
      times: 2,
      idempotencyKeys: [null, null],
    });
    expect(code).toBe(1);
    // The service really got the unsafe entry more often than the scenario ran (1 + 2 runs).
    const unkeyed = received.filter((r) => r.key === undefined && r.body.includes('"amount":7'));
    expect(unkeyed.length).toBeGreaterThan(3);
    // Every keyed POST carried its session and call id.
    for (const r of received.filter((r) => r.body.includes('"amount":5')))
      expect(r.key).toMatch(/^ses_\w+:call_\w+$/);
  }, 900_000);

  it("prints the seed and which kill found the tool, in a table", async () => {
    // Alone, seed 8's first kill point is "after commit #5".
    const { code, stdout, stderr } = await crash([
      "--runs",
      "1",
      "--seed",
      "8",
      "--filter",
      "without a key",
    ]);
    expect(stderr).toContain("crash mode: seed 8, 1 runs per scenario");
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /ledger › posts an entry without a key {2}FAIL {2}1 of 15 kill points, 1 kills/,
    );
    expect(stdout).toMatch(
      /tool post_entry_unsafe is not idempotent: its run sent POST ledger_api \/entries 2 times for call call_\w+ \(run 1, killed after commit #5\)/,
    );
    expect(stdout).toContain("0 passed, 1 failed (seed 8; rerun with --seed 8)");
  }, 900_000);
});
