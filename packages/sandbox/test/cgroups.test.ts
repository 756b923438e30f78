import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CGROUP_ROOT, detectCgroups } from "../src/index.ts";

const MIB = 1024 ** 2;

function readTrimmed(path: string): string {
  return readFileSync(path, "utf8").trim();
}

describe("control groups on the host's cgroupfs", () => {
  it("creates a group with limits, admits a process, and removes it once the process is gone", async () => {
    const { cgroups, status } = detectCgroups(DEFAULT_CGROUP_ROOT);
    if (!cgroups) throw new Error(`this test needs usable cgroups: ${JSON.stringify(status)}`);
    const group = cgroups.create("probe", { totalMemoryBytes: 64 * MIB, maxTasks: 9, cpus: 0.5 });
    const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      group.admit([sleeper.pid ?? 0]);
      for (const path of group.paths) {
        expect(readTrimmed(join(path, "cgroup.procs")).split("\n")).toContain(String(sleeper.pid));
      }
      const pids = group.paths.find((p) => existsSync(join(p, "pids.max"))) ?? "";
      expect(readTrimmed(join(pids, "pids.max"))).toBe("9");
      // Still holding a process: removal must report failure rather than pretend.
      expect(await group.remove()).toBe(false);
    } finally {
      sleeper.kill("SIGKILL");
      await new Promise((resolve) => sleeper.once("exit", resolve));
    }
    expect(await group.remove()).toBe(true);
    await cgroups.close();
    for (const path of [...group.paths, ...cgroups.parentPaths])
      expect(existsSync(path)).toBe(false);
  });
});

describe("cgroup v2 file layout (a plain directory standing in for cgroupfs)", () => {
  const fake = mkdtempSync(join(tmpdir(), "oc-cgroup2-"));
  afterAll(() => rmSync(fake, { recursive: true, force: true }));

  it("refuses a v2 root without the needed controllers", () => {
    const root = mkdtempSync(join(fake, "bare-"));
    writeFileSync(join(root, "cgroup.controllers"), "cpu io\n");
    const { cgroups, status } = detectCgroups(root);
    expect(cgroups).toBeUndefined();
    expect(status).toEqual({
      enabled: false,
      reason: `cgroup v2 at ${root} lacks the memory, pids controller(s)`,
    });
  });

  it("enables the controllers and writes memory.max, pids.max and cpu.max", () => {
    const root = mkdtempSync(join(fake, "v2-"));
    writeFileSync(join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n");
    writeFileSync(join(root, "cgroup.subtree_control"), "\n");
    const { cgroups, status } = detectCgroups(root);
    expect(status).toMatchObject({ enabled: true, version: 2 });
    if (!cgroups) throw new Error("expected v2 support");
    const [parent] = cgroups.parentPaths;
    expect(readTrimmed(join(root, "cgroup.subtree_control"))).toBe("+memory +pids +cpu");
    expect(readTrimmed(join(parent ?? "", "cgroup.subtree_control"))).toBe("+memory +pids +cpu");
    const group = cgroups.create("one", { totalMemoryBytes: 3 * MIB, maxTasks: 7, cpus: 1.5 });
    const dir = join(parent ?? "", "one");
    expect(group.paths).toEqual([dir]);
    expect(readTrimmed(join(dir, "memory.max"))).toBe(String(3 * MIB));
    expect(readTrimmed(join(dir, "pids.max"))).toBe("7");
    expect(readTrimmed(join(dir, "cpu.max"))).toBe("150000 100000");
    writeFileSync(join(dir, "memory.events"), "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n");
    expect(group.oomKills()).toBe(2);
  });
});
