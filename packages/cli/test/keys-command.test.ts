import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const dir = join(repo, "test-output", `keys-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]) {
  try {
    const { stdout } = await run(process.execPath, [bin, ...args]);
    return { code: 0, stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

describe("opencomputer keys", () => {
  it("creates a key shown once and stored hashed, lists without secrets, revokes", async () => {
    mkdirSync(dir, { recursive: true });
    const created = await cli([
      "keys",
      "create",
      "--dir",
      dir,
      "--name",
      "ci",
      "--project",
      "team-b",
    ]);
    expect(created.code).toBe(0);
    const [idLine, key] = created.stdout.trim().split("\n");
    const id = idLine!.split("\t")[0]!;
    expect(key).toMatch(/^oc_/);
    expect(readFileSync(join(dir, ".opencomputer/keys.json"), "utf8")).not.toContain(key!);
    const listed = JSON.parse((await cli(["keys", "list", "--dir", dir, "--json"])).stdout);
    expect(listed).toEqual([
      { id, name: "ci", projectId: "team-b", createdAt: expect.any(String), revokedAt: null },
    ]);
    expect((await cli(["keys", "create", "--dir", dir, "--project", "Bad Project"])).code).toBe(1);
    expect((await cli(["keys", "revoke", id, "--dir", dir])).code).toBe(0);
    expect(
      JSON.parse((await cli(["keys", "list", "--dir", dir, "--json"])).stdout)[0].revokedAt,
    ).not.toBeNull();
    expect((await cli(["keys", "revoke", "key_missing", "--dir", dir])).code).toBe(1);
    expect((await cli(["keys", "frob"])).code).toBe(2);
  });
});
