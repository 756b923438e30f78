import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, harness, output, requireBubblewrap } from "./helpers.ts";

describe("the computer's seccomp filter", () => {
  let h: Harness;
  beforeAll(() => {
    requireBubblewrap();
    h = harness();
  });
  afterAll(() => h.dispose());

  const refused = async (command: string) => {
    const result = output(await h.run("seccomp", { command: `${command}; echo "exit=$?"` }));
    return result;
  };

  it("refuses new user (and other) namespaces", async () => {
    for (const command of [
      "unshare -U true",
      "unshare -r id",
      "unshare -n true",
      "unshare -m true",
    ]) {
      const result = await refused(command);
      expect(result.stdout, command).toMatch(/exit=[1-9]/);
      expect(result.stderr, command).toMatch(/Operation not permitted/);
    }
  });

  it("filters every process in the computer, PID 1 included (no unfiltered bwrap init)", async () => {
    const command = "sleep 30 & for s in /proc/[0-9]*/status; do grep -H '^Seccomp:' $s; done";
    const lines = output(await h.run("pid1-filter", { command }))
      .stdout.trim()
      .split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(3); // the loop, this shell (or grep), sleep
    expect(lines).toContain("/proc/1/status:Seccomp:\t2");
    for (const line of lines) expect(line).toMatch(/:Seccomp:\t2$/);
  });

  it("refuses a nested bubblewrap sandbox", async () => {
    const result = await refused("bwrap --ro-bind / / true");
    expect(result.stdout).toMatch(/exit=[1-9]/);
    expect(result.stderr).toMatch(/bwrap:/);
  });

  it("refuses keyctl (allowed by the kernel without the filter), via python when present", async () => {
    if (!existsSync("/usr/bin/python3")) return;
    const script = [
      "import ctypes, os",
      "libc = ctypes.CDLL(None, use_errno=True)",
      // keyctl(KEYCTL_GET_KEYRING_ID=0, KEY_SPEC_SESSION_KEYRING=-3, 1)
      "r = libc.syscall(250 if os.uname().machine == 'x86_64' else 219, 0, -3, 1)",
      "print('keyctl', r, ctypes.get_errno())",
    ].join("\n");
    const result = output(await h.run("seccomp", { command: `python3 -c "${script}"` }));
    expect(result.stdout).toBe("keyctl -1 1\n");
  });

  it("still runs ordinary tools: bash, coreutils, tar, python, node, git", async () => {
    const steps = [
      "bash -c 'echo bash-ok'",
      "ls / >/dev/null && echo ls-ok",
      "mkdir -p t && echo x > t/a && tar -cf t.tar t && tar -tf t.tar | head -1",
      "(sleep 0.1 & wait) && echo fork-ok",
      ...(existsSync("/usr/bin/python3")
        ? ["python3 -c 'import subprocess; print(subprocess.run([\"true\"]).returncode)'"]
        : []),
      ...(existsSync("/usr/bin/node")
        ? ['node -e \'require("child_process").execSync("true"); console.log("node-ok")\'']
        : []),
      ...(existsSync("/usr/bin/git") ? ["git init -q repo && echo git-ok"] : []),
    ];
    const result = output(await h.run("tools", { command: steps.join(" && ") }));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("bash-ok\nls-ok\nt/\nfork-ok\n");
    if (existsSync("/usr/bin/node")) expect(result.stdout).toContain("node-ok");
    if (existsSync("/usr/bin/git")) expect(result.stdout).toContain("git-ok");
  });
});
