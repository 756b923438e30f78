import { execFileSync } from "node:child_process";
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  ensureOwnedDir,
  measureTree,
  readRegularNoFollow,
  UnsafeDirectoryError,
  UnsafeFileError,
} from "../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "oc-safe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UnsafeFileError) return error.reason;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("readRegularNoFollow", () => {
  const secret = join(dir, "secret");
  writeFileSync(secret, "secret\n", { mode: 0o600 });

  it("reads a plain file, bounded", async () => {
    writeFileSync(join(dir, "plain"), "hello world");
    const { bytes, size } = await readRegularNoFollow(join(dir, "plain"), 5);
    expect(bytes.toString()).toBe("hello");
    expect(size).toBe(11);
  });

  it("refuses a symlink instead of following it", async () => {
    symlinkSync(secret, join(dir, "link"));
    expect(await refusal(readRegularNoFollow(join(dir, "link"), 100))).toBe("symlink");
  });

  it("refuses a FIFO without blocking on it (no writer ever comes)", async () => {
    execFileSync("mkfifo", [join(dir, "fifo")]);
    expect(await refusal(readRegularNoFollow(join(dir, "fifo"), 100))).toBe("fifo");
  });

  it("refuses a hard link and a file of another owner", async () => {
    linkSync(secret, join(dir, "hard"));
    expect(await refusal(readRegularNoFollow(join(dir, "hard"), 100))).toBe("hard_linked");
    writeFileSync(join(dir, "mine"), "x");
    const owner = statSync(join(dir, "mine")).uid;
    const result = refusal(readRegularNoFollow(join(dir, "mine"), 100, { ownerUid: owner + 1 }));
    expect(await result).toBe("foreign_owner");
  });

  it("lets a missing file fail as ENOENT for the caller to interpret", async () => {
    await expect(readRegularNoFollow(join(dir, "missing"), 1)).rejects.toMatchObject({
      code: "ENOENT",
    });
  });
});

describe("ensureOwnedDir", () => {
  it("refuses a symlink and leaves its target's owner alone", async () => {
    const target = join(dir, "target");
    mkdirSync(target);
    const before = statSync(target);
    symlinkSync(target, join(dir, "swapped"));
    await expect(
      ensureOwnedDir(join(dir, "swapped"), { mode: 0o700, uid: 65534, gid: 65534 }),
    ).rejects.toBeInstanceOf(UnsafeDirectoryError);
    expect(statSync(target).uid).toBe(before.uid);
    expect(statSync(target).mode).toBe(before.mode);
  });

  it("creates a directory with the owner and mode (as root)", async () => {
    const path = join(dir, "owned");
    const owner = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    await ensureOwnedDir(path, { mode: 0o711, ...owner });
    const stats = statSync(path);
    expect(stats.mode & 0o777).toBe(0o711);
    if (process.getuid?.() === 0) expect(stats.uid).toBe(65534);
  });
});

describe("measureTree", () => {
  it("counts allocated blocks and entries, hard links once, and never follows links", async () => {
    const root = join(dir, "tree");
    mkdirSync(join(root, "sub"), { recursive: true });
    writeFileSync(join(root, "sub", "a"), Buffer.alloc(64 * 1024, 1));
    linkSync(join(root, "sub", "a"), join(root, "b"));
    // A link to a big directory outside: following it would count /usr.
    symlinkSync("/usr", join(root, "usr"));
    const usage = await measureTree(root, {
      stopAboveBytes: 1e12,
      stopAboveEntries: 1e9,
      maxDepth: 10,
    });
    expect(usage.entries).toBe(4); // sub, sub/a, b, usr
    expect(usage.complete).toBe(true);
    expect(usage.bytes).toBeGreaterThanOrEqual(64 * 1024);
    expect(usage.bytes).toBeLessThan(1024 * 1024);
  });

  it("stops at its bounds and reports nesting deeper than maxDepth", async () => {
    const root = join(dir, "deep");
    mkdirSync(join(root, "1", "2", "3", "4"), { recursive: true });
    const deep = await measureTree(root, {
      stopAboveBytes: 1e12,
      stopAboveEntries: 1e9,
      maxDepth: 2,
    });
    expect(deep.tooDeep).toBe(true);
    const few = await measureTree(root, {
      stopAboveBytes: 1e12,
      stopAboveEntries: 1,
      maxDepth: 10,
    });
    expect(few.complete).toBe(false);
  });
});
