// `opencomputer memory ...` against `opencomputer dev` (a real server process): create, show,
// edit from a file, freeze, unfreeze, list, export and remove a document; every write carries the
// ETag it read; bad input and missing documents exit 1 or 2 with the API's code.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../src/main.ts";
import { type DevServer, startDev } from "./dev-server.ts";

let dev: DevServer | undefined;
let dir: string;
const saved = { url: process.env.OPENCOMPUTER_API_URL, key: process.env.OPENCOMPUTER_API_KEY };

beforeAll(async () => {
  dev = await startDev("memory");
  dir = mkdtempSync(join(tmpdir(), "oc-memory-cli-"));
}, 90_000);

afterAll(() => {
  dev?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  for (const [name, value] of [
    ["OPENCOMPUTER_API_URL", saved.url],
    ["OPENCOMPUTER_API_KEY", saved.key],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  process.env.OPENCOMPUTER_API_URL = dev!.url;
  process.env.OPENCOMPUTER_API_KEY = dev!.key;
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
    return { code: await main(["memory", ...argv]), stdout, stderr };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe("opencomputer memory", () => {
  it("manages a document from create to remove", async () => {
    const created = await run(
      "create",
      "notes",
      "workshop",
      "--title",
      "Workshop notes",
      "--summary",
      "setup",
      "--json",
    );
    expect(created.stderr).toBe("");
    expect(JSON.parse(created.stdout)).toMatchObject({
      id: "workshop",
      title: "Workshop notes",
      text: "",
      summary: "setup",
    });

    const file = join(dir, "text.md");
    writeFileSync(file, "Exercises run on Node.js 22.");
    const edited = await run("edit", "notes", "workshop", "--text-file", file, "--json");
    const doc = JSON.parse(edited.stdout);
    expect(doc).toMatchObject({
      text: "Exercises run on Node.js 22.",
      summary: "setup",
      bytes: 28,
    });

    const frozen = await run("freeze", "notes", "workshop", "--json");
    expect(JSON.parse(frozen.stdout).agentWrites).toBe("disabled");
    const shown = await run("show", "notes", "workshop");
    expect(shown.stdout).toMatch(/agent writes disabled/);
    expect(shown.stdout).toMatch(/Exercises run on Node\.js 22\./);
    expect(
      JSON.parse((await run("unfreeze", "notes", "workshop", "--json")).stdout).agentWrites,
    ).toBe("enabled");

    await run("create", "notes", "second", "--title", "Second", "--frozen");
    const listed = JSON.parse((await run("list", "notes", "--json")).stdout);
    expect(listed.documents.map((d: { id: string }) => d.id).sort()).toEqual([
      "second",
      "workshop",
    ]);
    expect(listed.documents.find((d: { id: string }) => d.id === "second").agentWrites).toBe(
      "disabled",
    );

    const out = join(dir, "export");
    const exported = await run("export", "--out", out, "--json");
    expect(JSON.parse(exported.stdout).files).toHaveLength(2);
    expect(JSON.parse(readFileSync(join(out, "notes", "workshop.json"), "utf8"))).toMatchObject({
      text: "Exercises run on Node.js 22.",
    });

    expect((await run("remove", "notes", "workshop")).stdout).toMatch(/removed notes\/workshop/);
    const gone = await run("show", "notes", "workshop");
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^error not_found:/);
    const reused = await run("create", "notes", "workshop", "--title", "Again");
    expect(reused.code).toBe(1);
    expect(reused.stderr).toMatch(/^error precondition_failed:/);
  });

  it("refuses bad input with usage errors and the API's codes", async () => {
    expect((await run("create", "notes", "x")).code).toBe(2);
    expect((await run("list")).code).toBe(2);
    expect((await run("show", "notes", "x", "--environment", "staging")).code).toBe(2);
    const tooBig = join(dir, "big.txt");
    writeFileSync(tooBig, "x".repeat(9000));
    const big = await run("create", "notes", "big", "--title", "Big", "--text-file", tooBig);
    expect([big.code, big.stderr]).toEqual([
      1,
      expect.stringMatching(/^error memory_limit_exceeded: "text" is 9000/),
    ]);
    const other = await run("list", "notes", "--project", "someone-else");
    expect([other.code, other.stderr]).toEqual([
      1,
      expect.stringMatching(/^error project_not_found/),
    ]);
  });
});
