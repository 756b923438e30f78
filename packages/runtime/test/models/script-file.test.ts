// The scripted model's file cache: a rewritten script is used by the very next model step, as
// an author's test expects when it writes a script and sends a turn at once. (A cache trusted
// for 100 ms with a file watcher was tried to save the stat per step, and broke exactly that.)
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadScript } from "../../src/models/script-file.ts";

let dir: string;
const file = () => join(dir, "opencomputer", "scripts", "s.json");
const write = (text: string) => writeFileSync(file(), JSON.stringify({ steps: [{ text }] }));
const textOf = () => loadScript(dir, "s", "script/s").steps[0]?.text;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "oc-script-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loadScript", () => {
  it("sees a rewrite at the next call", () => {
    write("one");
    expect(textOf()).toBe("one");
    expect(textOf()).toBe("one");
    write("two, longer");
    expect(textOf()).toBe("two, longer");
  });

  it("sees a file replaced by rename, as editors save", () => {
    write("first");
    expect(textOf()).toBe("first");
    const tmp = join(dir, "opencomputer", "scripts", ".s.json.tmp");
    writeFileSync(tmp, JSON.stringify({ steps: [{ text: "second!" }] }));
    renameSync(tmp, file());
    expect(textOf()).toBe("second!");
    write("third, after the rename");
    expect(textOf()).toBe("third, after the rename");
  });

  it("reports a removed script as model_unavailable, and bad JSON naming the file", () => {
    write("here");
    expect(textOf()).toBe("here");
    rmSync(file());
    expect(() => textOf()).toThrow(expect.objectContaining({ code: "model_unavailable" }));
    writeFileSync(file(), "{ not json");
    expect(() => textOf()).toThrow(/s\.json is not valid JSON/);
  });
});
