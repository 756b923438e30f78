import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_CGROUP_ROOT, discoverSandboxHost } from "@opencomputer/sandbox";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Harness, harness, hostProcesses, output, requireBubblewrap } from "./helpers.ts";

const MIB = 1024 ** 2;

/** The computer's child group directories: one per parent (one on v2, one per v1 hierarchy). */
function childGroups(parents: string[]): string[] {
  return parents.flatMap((parent) =>
    readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name)),
  );
}

function readTrimmed(path: string): string {
  return readFileSync(path, "utf8").trim();
}

describe("control groups (real cgroupfs)", () => {
  let h: Harness;
  let parents: string[] = [];
  let version: 1 | 2 = 1;
  beforeAll(() => {
    requireBubblewrap();
    h = harness({ limits: { totalMemoryBytes: 64 * MIB, maxTasks: 100, cpus: 0.5 } });
    const status = h.provider.cgroups;
    if (!status.enabled) throw new Error(`these tests need usable cgroups: ${status.reason}`);
    parents = status.parentPaths;
    version = status.version;
  });
  afterAll(async () => {
    await h.dispose();
    // The provider's parent groups go away with it.
    for (const parent of parents) expect(existsSync(parent), parent).toBe(false);
  });

  it("puts every process of the computer into its group, with the configured limits", async () => {
    output(await h.run("cg", { command: "sleep 77 & echo started" }));
    // The command returns once the shell has forked; the child may not have exec'd sleep yet.
    let sleeper: number | undefined;
    await vi.waitFor(() => {
      sleeper = hostProcesses(["sleep", "77"])[0];
      expect(sleeper).toBeDefined();
    });
    const groups = childGroups(parents);
    expect(groups.length).toBe(parents.length);
    // The background process, forked long after the sandbox started, is in the group.
    const membership = readFileSync(`/proc/${sleeper}/cgroup`, "utf8").split("\n");
    for (const group of groups) {
      // v1: "<id>:memory:/path in that hierarchy"; v2: "0::/path".
      const inRoot = group.slice(DEFAULT_CGROUP_ROOT.length);
      const controller = version === 1 ? (inRoot.split("/")[1] ?? "") : "";
      const path = version === 1 ? inRoot.slice(controller.length + 1) : inRoot;
      const line = membership.find((l) => l.split(":")[1]?.split(",").includes(controller));
      expect(line?.split(":").slice(2).join(":"), group).toBe(path);
      expect(readTrimmed(join(group, "cgroup.procs")).split("\n")).toContain(String(sleeper));
    }
    const file = (name: string) =>
      readTrimmed(join(groups.find((g) => existsSync(join(g, name))) ?? "", name));
    if (version === 1) {
      expect(file("memory.limit_in_bytes")).toBe(String(64 * MIB));
      if (groups.some((g) => existsSync(join(g, "memory.memsw.limit_in_bytes")))) {
        expect(file("memory.memsw.limit_in_bytes")).toBe(String(64 * MIB));
      }
      expect(file("pids.max")).toBe("100");
      expect(file("cpu.cfs_quota_us")).toBe("50000");
      expect(file("cpu.cfs_period_us")).toBe("100000");
    } else {
      expect(file("memory.max")).toBe(String(64 * MIB));
      expect(file("pids.max")).toBe("100");
      expect(file("cpu.max")).toBe("50000 100000");
    }

    await h.provider.release("cg", "requested");
    for (const group of groups) expect(existsSync(group), group).toBe(false);
    expect(hostProcesses(["sleep", "77"])).toEqual([]);
  });

  it("kills a command over the total memory limit, says so, and keeps the computer", async () => {
    output(await h.run("oom", { command: "echo before" }));
    // A bash string doubled 28 times would hold 256 MiB (several copies while growing).
    const grow = "s=x; for i in $(seq 1 28); do s=$s$s; done; echo grown";
    const result = await h.run("oom", { command: grow });
    if (result.ok) {
      const { exitCode, stdout } = output(result);
      expect(exitCode).toBe(137);
      expect(stdout).toBe("");
      expect((result.output as { note?: string }).note).toMatch(/memory limit \(64 MiB/);
    } else {
      // Documented alternative: the OOM killer took the computer's loop instead.
      expect(result.message).toMatch(/memory limit \(64 MiB/);
    }
    const next = output(await h.run("oom", { command: "echo after" }));
    expect(next.stdout).toBe("after\n");
    expect(output(await h.run("oom", { command: "echo quiet" }))).not.toHaveProperty("note");
  });
});

describe("a computer that fails to start", () => {
  it("leaves no control group (nor scratch directory) behind", async () => {
    requireBubblewrap();
    // bwrap starts, is admitted into the group, then cannot exec the loop's shell.
    const host = { ...discoverSandboxHost(), shellPath: "/nonexistent/bash" };
    const h = harness({ host });
    try {
      const status = h.provider.cgroups;
      if (!status.enabled) throw new Error(`this test needs usable cgroups: ${status.reason}`);
      const result = await h.run("broken", { command: "true" });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toContain("did not start");
      // Checked before provider.close(), which would retry leftovers.
      expect(childGroups(status.parentPaths.filter((p) => existsSync(p)))).toEqual([]);
      expect(readdirSync(join(h.rootDir, "scratch"))).toEqual([]);
    } finally {
      await h.dispose();
    }
  });
});

describe("a computer whose scratch directory cannot be removed", () => {
  it("still has its control group removed on release", async () => {
    requireBubblewrap();
    const h = harness();
    const status = h.provider.cgroups;
    if (!status.enabled) throw new Error(`this test needs usable cgroups: ${status.reason}`);
    output(await h.run("stuck", { command: "true" }));
    // A mount on the control directory makes removing the scratch directory fail (EBUSY).
    const control = join(h.rootDir, "scratch", "stuck-1", "control");
    execFileSync("mount", ["-t", "tmpfs", "none", control]);
    try {
      expect(childGroups(status.parentPaths)).toHaveLength(status.parentPaths.length);
      await h.provider.release("stuck", "requested");
      expect(childGroups(status.parentPaths.filter((p) => existsSync(p)))).toEqual([]);
    } finally {
      execFileSync("umount", [control]);
      await h.dispose();
    }
  });
});

describe("without usable control groups", () => {
  let h: Harness;
  beforeAll(() => {
    requireBubblewrap();
    h = harness({ cgroupRoot: "/nonexistent/cgroup-root" });
  });
  afterAll(() => h.dispose());

  it("still runs computers and says cgroups are off", async () => {
    expect(h.provider.cgroups).toEqual({
      enabled: false,
      reason: "no cgroup filesystem at /nonexistent/cgroup-root",
    });
    expect(output(await h.run("plain", { command: "echo works" })).stdout).toBe("works\n");
  });
});
