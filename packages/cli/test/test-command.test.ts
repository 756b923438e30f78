// `opencomputer test` on a fixture project (fixtures/ledger): scenarios from JSON and from a
// `.test.ts` module (scored in the sandboxed loader), the table and exit code, `--json`, and the
// typed errors for bad test files. The ledger tools post to a local HTTP service.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const root = join(repo, "test-output", `cli-test-${process.pid}`);

let ledger: Server;
let origin = "";
const posts: Array<string | undefined> = [];

async function cli(project: string, args: string[]) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [bin, "test", "--dir", project, ...args],
      {
        env: {
          ...process.env,
          LEDGER_ORIGIN: origin,
          OPENCOMPUTER_AGENT_ENV: "LEDGER_ORIGIN",
          // Must not reach the scoring function (it scores 0 when it can see this).
          LEDGER_SECRET_PROBE: "visible",
        },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function project(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  cpSync(join(import.meta.dirname, "fixtures/ledger/opencomputer"), join(dir, "opencomputer"), {
    recursive: true,
  });
  return dir;
}

beforeAll(async () => {
  ledger = createServer((req, res) => {
    posts.push(req.headers["idempotency-key"] as string | undefined);
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((done) => ledger.listen(0, "127.0.0.1", done));
  origin = `http://127.0.0.1:${(ledger.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((done) => ledger.close(done));
  rmSync(root, { recursive: true, force: true });
});

// Each case builds the project and starts runtimes and a loader process: slow on a busy machine.
describe("opencomputer test", { timeout: 240_000 }, () => {
  const dir = project("main");

  it("prints a table of passing and failing scenarios and exits 1 on a failure", async () => {
    const { code, stdout, stderr } = await cli(dir, ["ledger"]);
    expect(stderr).toBe("");
    expect(code).toBe(1);
    expect(stdout).toMatch(/ledger › records an entry and reports the total\s+pass/);
    expect(stdout).toMatch(/ledger › expects other words\s+FAIL/);
    expect(stdout).toContain(
      'toolCalls[0]: expected {"name":"record_entry","input":{"amount":6}}, got [{"name":"record_entry","input":{"amount":5}},{"name":"report","input":{"total":5}}]',
    );
    expect(stdout).toContain(
      'text equals: expected "Recorded 6.", got "Recorded 5; the total is 5."',
    );
    expect(stdout).toMatch(/ledger › scores the reply\s+pass/);
    expect(stdout).toMatch(/ledger › scores below the threshold\s+FAIL/);
    expect(stdout).toContain('text score: expected ">= 0.9", got 0.027');
    expect(stdout).toMatch(/ledger › posts an entry without a key\s+pass/);
    expect(stdout).toMatch(/ledger › transfers once approved\s+pass/);
    expect(stdout).toContain("4 passed, 2 failed");
    // The tools really called the service, the idempotent one with its call's key.
    expect(posts.some((k) => /^ses_\w+:call_\w+$/.test(k ?? ""))).toBe(true);
    expect(posts).toContain(undefined);
    // The approved transfer was applied with its decision's id as the key.
    expect(posts.some((k) => /^dec_\w+$/.test(k ?? ""))).toBe(true);
  });

  it("exits 0 when every chosen scenario passes, and --json is one parseable document", async () => {
    const { code, stdout } = await cli(dir, ["--json", "--filter", "records an entry"]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ passed: 1, failed: 0 });
    expect(report.scenarios).toHaveLength(1);
    expect(report.scenarios[0]).toMatchObject({
      agent: "ledger",
      file: "opencomputer/agents/ledger/tests/entries.json",
      name: "records an entry and reports the total",
      passed: true,
      failures: [],
    });
  });

  it("--json lists each failure with what was expected and what came", async () => {
    const { code, stdout } = await cli(dir, ["--json", "--filter", "other words"]);
    expect(code).toBe(1);
    const report = JSON.parse(stdout);
    expect(report.failed).toBe(1);
    expect(report.scenarios[0].failures).toContainEqual({
      check: "text equals",
      expected: "Recorded 6.",
      got: "Recorded 5; the total is 5.",
    });
  });
});

describe("bad test files", { timeout: 240_000 }, () => {
  it("names an unknown agent", async () => {
    const { code, stderr } = await cli(project("unknown"), ["nobody"]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error test_agent_unknown: No agent "nobody" .*\(agents: ledger\)/);
  });

  it("names a JSON file that does not parse", async () => {
    const dir = project("malformed");
    writeFileSync(join(dir, "opencomputer/agents/ledger/tests/broken.json"), '{ "name": "x", ');
    const { code, stderr } = await cli(dir, []);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^error test_file_invalid: opencomputer\/agents\/ledger\/tests\/broken\.json: \$: not valid JSON/,
    );
  });

  it("names the field of a scenario that is malformed", async () => {
    const dir = project("shape");
    writeFileSync(
      join(dir, "opencomputer/agents/ledger/tests/shape.json"),
      JSON.stringify({ name: "x", steps: ["hi"], expect: { text: { score: 1, threshold: 2 } } }),
    );
    const { code, stderr } = await cli(dir, []);
    expect(code).toBe(1);
    expect(stderr).toContain(
      "error test_file_invalid: opencomputer/agents/ledger/tests/shape.json: $[0].expect.text: score must be a function",
    );
  });

  it("names a .test.ts module with a syntax error", async () => {
    const dir = project("syntax");
    writeFileSync(
      join(dir, "opencomputer/agents/ledger/tests/bad.test.ts"),
      "export default {{;\n",
    );
    const { code, stderr } = await cli(dir, []);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^error test_file_invalid: opencomputer\/agents\/ledger\/tests\/bad\.test\.ts: the module failed to load/,
    );
  });
});
