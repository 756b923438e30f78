import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createKeyFileAuth, KeyFile } from "../src/index.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("API keys in a key file", () => {
  it("are stored hashed, verified, and refused once revoked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-keys-"));
    dirs.push(dir);
    const path = join(dir, ".opencomputer", "keys.json");
    const file = new KeyFile(path);
    const auth = createKeyFileAuth(path, ["env-key"]);
    const { key, stored } = file.create("ci");
    expect(readFileSync(path, "utf8")).not.toContain(key);
    expect(stored.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(await auth.verify(key)).toEqual({ projectId: "default" });
    expect(await auth.verify("env-key")).not.toBeNull();
    expect(await auth.verify(`${key}x`)).toBeNull();
    file.revoke(stored.id);
    expect(await auth.verify(key)).toBeNull();
    expect(file.list()[0]!.revokedAt).not.toBeNull();
    expect(() => file.revoke("key_missing")).toThrow(/No key key_missing/);
  });

  it("map each key to its own project", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-keys-"));
    dirs.push(dir);
    const path = join(dir, "keys.json");
    const file = new KeyFile(path);
    const auth = createKeyFileAuth(path, ["env-key"], "ops");
    const a = file.create("a");
    const b = file.create("b", "team-b");
    expect(await auth.verify(a.key)).toEqual({ projectId: "default" });
    expect(await auth.verify(b.key)).toEqual({ projectId: "team-b" });
    expect(await auth.verify("env-key")).toEqual({ projectId: "ops" });
    expect(() => file.create("c", "Not A Project")).toThrow(/project: must match/);
  });
});
