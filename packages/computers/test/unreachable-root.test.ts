import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BubblewrapComputerProvider, createShellTools } from "../src/index.ts";
import { output, requireBubblewrap } from "./helpers.ts";

/** A project whose directory the sandbox user (65534) cannot traverse, as under /root. */
describe("a project under a 0700 directory", () => {
  const outer = mkdtempSync(join(tmpdir(), "oc-private-"));
  const fallbackDir = mkdtempSync(join(tmpdir(), "oc-fallback-"));
  beforeAll(() => {
    requireBubblewrap();
    expect(statSync(outer).mode & 0o777).toBe(0o700);
  });
  afterAll(() => {
    rmSync(outer, { recursive: true, force: true });
    rmSync(fallbackDir, { recursive: true, force: true });
  });

  const run = (provider: BubblewrapComputerProvider, command: string) =>
    createShellTools(provider)[0]!.execute({
      input: { command },
      sessionId: "s1",
      turnId: "t",
      toolCallId: `c-${Math.random()}`,
      agentId: "a",
      signal: new AbortController().signal,
      reportProgress: async () => {},
    });

  it("runs commands, keeping the computers' directories where uid 65534 can reach them", async () => {
    const rootDir = join(outer, "project", ".opencomputer", "computers");
    const provider = new BubblewrapComputerProvider({ rootDir, fallbackDir });
    try {
      const result = output(await run(provider, "echo hello > note; cat note; id -u"));
      expect(result.stdout).toBe("hello\n65534\n");
      expect(provider.baseDir.startsWith(fallbackDir)).toBe(true);
      const note = join(provider.workspaceDir("s1"), "note");
      expect(readFileSync(note, "utf8")).toBe("hello\n");
      // Stable per rootDir: a new provider (a restart) finds the same workspace.
      await provider.close();
      const again = new BubblewrapComputerProvider({ rootDir, fallbackDir });
      expect(output(await run(again, "cat note")).stdout).toBe("hello\n");
      await again.close();
    } finally {
      await provider.close();
    }
  });

  it("says what to change when even the fallback is unreachable", async () => {
    const rootDir = join(outer, "other", "computers");
    const provider = new BubblewrapComputerProvider({ rootDir, fallbackDir: join(outer, "fb") });
    const result = await run(provider, "touch /workspace/x");
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain(`chmod o+x ${outer}`);
      expect(result.message).toContain("fallbackDir");
    }
    expect(existsSync(join(outer, "fb"))).toBe(false);
    await provider.close();
    // Nothing was created for it, and the host tool agrees the directory is private.
    expect(execFileSync("stat", ["-c", "%a", outer], { encoding: "utf8" }).trim()).toBe("700");
  });
});
