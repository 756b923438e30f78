import { randomUUID } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, harness, output, requireBubblewrap } from "./helpers.ts";

/** The command's own output files, as the sandbox sees them. */
const OWN_FILES = "f=$(readlink /proc/$$/fd/1); e=$(readlink /proc/$$/fd/2); rm -f $f $e";

/** Fails (instead of hanging the test run) when `promise` takes longer than `ms`. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} still pending after ${ms} ms`)), ms).unref(),
    ),
  ]);
}

describe("output files the command replaced", () => {
  let h: Harness;
  const secret = `/root/oc-output-secret-${randomUUID()}`;
  beforeAll(async () => {
    requireBubblewrap();
    h = harness();
    await writeFile(secret, "host-secret-content\n", { mode: 0o600 });
  });
  afterAll(async () => {
    await import("node:fs/promises").then((fs) => fs.rm(secret, { force: true }));
    await h.dispose();
  });

  it("refuses symlinks to host files instead of reading them as root", async () => {
    const command = `${OWN_FILES}; ln -s /etc/shadow $f; ln -s ${secret} $e`;
    const result = await h.run("link", { command });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain("replaced its output file with a symbolic link");
    expect(result.message).not.toContain("host-secret-content");
    const shadow = await readFile("/etc/shadow", "utf8");
    expect(result.message).not.toContain(shadow.split("\n")[0]);
    // The computer is still usable for ordinary commands.
    expect(output(await h.run("link", { command: "echo fine" })).stdout).toBe("fine\n");
  });

  it("refuses a hard link in place of an output file", async () => {
    const command = `${OWN_FILES}; echo mine > /run/computer/keep; ln /run/computer/keep $f`;
    const result = await h.run("hard", { command });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain("replaced its output file with a hard link");
  });

  it("refuses a directory in place of an output file, and the computer still releases cleanly", async () => {
    const result = await h.run("dir", { command: `${OWN_FILES}; mkdir $f` });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain("with something other than a plain file");
    }
    await h.provider.release("dir", "requested");
    const status = h.provider.cgroups;
    if (status.enabled) {
      const left = status.parentPaths
        .filter((parent) => existsSync(parent))
        .flatMap((parent) => readdirSync(parent))
        .filter((name) => name.endsWith("-dir-1"));
      expect(left).toEqual([]);
    }
  });

  it("FIFOs in place of output files fail the call at once and stall nothing else", async () => {
    // Each blocked open() would hold one of libuv's 4 threadpool threads: three computers
    // doing this at once (six opens) would starve every fs call of the process for good.
    const sessions = ["fifo-a", "fifo-b", "fifo-c"];
    const results = await within(
      20_000,
      Promise.all(sessions.map((s) => h.run(s, { command: `${OWN_FILES}; mkfifo $f $e` }))),
      "commands whose output files are FIFOs",
    );
    for (const result of results) {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toContain("replaced its output file with a FIFO");
    }
    // An unrelated fs operation and another computer's command still complete.
    await within(5000, readFile("/etc/hostname"), "an unrelated readFile");
    const other = await within(20_000, h.run("unrelated", { command: "echo ok" }), "a command");
    expect(output(other).stdout).toBe("ok\n");
  });
});
