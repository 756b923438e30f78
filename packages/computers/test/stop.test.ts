import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type Harness,
  harness,
  hostProcesses,
  output,
  requireBubblewrap,
  sleep,
} from "./helpers.ts";

describe("stopping commands", () => {
  let h: Harness;
  beforeAll(() => {
    requireBubblewrap();
    h = harness();
  });
  afterAll(() => h.dispose());

  // Durations no other process on the host is likely to use: the check looks host-wide (a
  // `sleep 300` typed in another shell once failed the precondition below).
  const sleepsAlive = () =>
    [
      ["sleep", "1013"],
      ["sleep", "2013"],
      ["sleep", "3013"],
      ["sleep", "10013"],
    ].flatMap(hostProcesses);

  it("a timeout stops the command and every process it started, detached ones included", async () => {
    expect(sleepsAlive()).toEqual([]);
    const started = Date.now();
    const pending = h.run("stop-1", {
      command:
        "echo before > written.txt; echo partial; sleep 1013 & setsid sleep 2013 & nohup sleep 3013 & sleep 10013",
      timeoutSeconds: 1,
    });
    await sleep(600);
    // The detached sleeps really ran (so the check below can fail), one per command line.
    expect(sleepsAlive().length).toBeGreaterThanOrEqual(4);
    const result = await pending;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain("timed out after 1s");
    expect(result.message).toContain("sleep 10013");
    expect(result.message).toContain("partial");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(sleepsAlive()).toEqual([]);
    const file = join(h.provider.workspaceDir("stop-1"), "written.txt");
    expect(existsSync(file) && readFileSync(file, "utf8")).toBe("before\n");
  });

  it("an abort (turn interrupt) stops the command the same way", async () => {
    const controller = new AbortController();
    const pending = h.run(
      "stop-2",
      { command: "setsid sleep 1001 & sleep 1002" },
      controller.signal,
    );
    await sleep(500);
    expect(hostProcesses(["sleep", "1001"]).length).toBe(1);
    controller.abort();
    const result = await pending;
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain("interrupted");
    expect([...hostProcesses(["sleep", "1001"]), ...hostProcesses(["sleep", "1002"])]).toEqual([]);
    // The computer keeps working for the next command.
    expect(output(await h.run("stop-2", { command: "echo again" })).stdout).toBe("again\n");
  });

  it("contains a fork bomb with the process limit and the host survives", async () => {
    const result = await h.run("bomb", {
      command: "bomb() { bomb | bomb & }; bomb; sleep 2; echo survived-inside",
      timeoutSeconds: 10,
    });
    // Either it finished or it timed out; both must leave the host and the runtime usable.
    expect(typeof (result.ok ? "ok" : result.message)).toBe("string");
    // With the limit holding, the host sees at most that many sandbox-user processes from it.
    const sandboxUserProcesses = readdirSync("/proc").filter((entry) => {
      try {
        return /^\d+$/.test(entry) && statSync(`/proc/${entry}`).uid === 65534;
      } catch {
        return false;
      }
    }).length;
    expect(sandboxUserProcesses).toBeLessThan(h.provider.limits.maxProcesses + 64);
    await h.provider.release("bomb", "requested");
    const fresh = await h.run("bomb-check", { command: "echo host-ok" });
    expect(output(fresh).stdout).toBe("host-ok\n");
    const limit = output(await h.run("bomb-check", { command: "ulimit -u" })).stdout.trim();
    expect(Number(limit)).toBe(h.provider.limits.maxProcesses);
  });

  it("keeps background processes between commands of one computer, not after its release", async () => {
    output(await h.run("bg", { command: "nohup sleep 1061 >/dev/null 2>&1 &" }));
    // The command returns once the shell has forked; the child may not have exec'd sleep yet.
    await vi.waitFor(() => expect(hostProcesses(["sleep", "1061"]).length).toBe(1), {
      timeout: 5000,
    });
    output(await h.run("bg", { command: "true" }));
    expect(hostProcesses(["sleep", "1061"]).length).toBe(1);
    await h.provider.release("bg", "requested");
    expect(hostProcesses(["sleep", "1061"])).toEqual([]);
  });

  it("a computer killed from outside while a command runs fails as such; the next one is fresh", async () => {
    output(await h.run("lost", { command: "echo kept > kept" }));
    // The loop is PID 1 of its namespace (--as-pid-1), so commands cannot signal it; the
    // host (an operator, the OOM killer) can. `sleep` is exec'd by bash -c: its parent is the loop.
    const pending = h.run("lost", { command: "sleep 5.321" });
    let sleeper: number | undefined;
    await vi.waitFor(() => {
      sleeper = hostProcesses(["sleep", "5.321"])[0];
      expect(sleeper).toBeDefined();
    });
    const stat = readFileSync(`/proc/${sleeper}/stat`, "utf8");
    const loop = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    process.kill(loop, "SIGKILL");
    const result = await pending;
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain("computer terminated");
    expect(output(await h.run("lost", { command: "cat kept" })).stdout).toBe("kept\n");
    expect(h.provider.generation("lost")).toBe(2);
  });

  it("a command cannot kill its computer's loop (PID 1 ignores signals from inside)", async () => {
    const result = output(await h.run("pid1", { command: "kill -9 $PPID; echo $PPID alive" }));
    expect(result.stdout).toBe("1 alive\n");
    expect(output(await h.run("pid1", { command: "echo still" })).stdout).toBe("still\n");
    expect(h.provider.generation("pid1")).toBe(1);
  });
});
