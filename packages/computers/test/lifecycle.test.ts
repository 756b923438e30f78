import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createShellTools } from "../src/index.ts";
import { type Harness, harness, ManualClock, output, requireBubblewrap } from "./helpers.ts";

describe("computer lifecycle", () => {
  let h: Harness;
  beforeAll(() => {
    requireBubblewrap();
    h = harness();
  });
  afterAll(() => h.dispose());

  it("is acquired lazily and reused", async () => {
    expect(h.provider.generation("lazy")).toBe(0);
    await h.run("lazy", { command: "true" });
    await h.run("lazy", { command: "true" });
    expect(h.provider.generation("lazy")).toBe(1);
  });

  it("keeps /workspace and drops /tmp across a forced generation change", async () => {
    output(await h.run("gen", { command: "echo keep > /workspace/k; echo lose > /tmp/l" }));
    expect(output(await h.run("gen", { command: "cat /tmp/l" })).stdout).toBe("lose\n");
    await h.provider.release("gen", "requested");
    const after = output(await h.run("gen", { command: "cat k; ls /tmp | wc -l" }));
    expect(after.stdout).toBe("keep\n0\n");
    expect(h.provider.generation("gen")).toBe(2);
    const reasons = h.events
      .filter((e) => e.sessionId === "gen")
      .map((e) => [e.generation, e.state, e.reason]);
    expect(reasons).toEqual([
      [1, "running", undefined],
      [1, "released", "requested"],
      [2, "running", "requested"],
    ]);
  });

  it("gives concurrent sessions separate workspaces", async () => {
    const [a, b] = await Promise.all([
      h.run("conc-a", { command: "echo a > mine; sleep 0.2; ls" }),
      h.run("conc-b", { command: "echo b > mine; sleep 0.2; ls; cat mine" }),
    ]);
    expect(output(a!).stdout).toBe("mine\n");
    expect(output(b!).stdout).toBe("mine\nb\n");
  });

  it("runs one session's commands one at a time in call order", async () => {
    const first = h.run("order", { command: "sleep 0.3; echo 1 >> log" });
    const second = h.run("order", { command: "echo 2 >> log; cat log" });
    await first;
    expect(output(await second).stdout).toBe("1\n2\n");
  });

  it("refuses an out-of-range timeout before running anything", async () => {
    for (const timeoutSeconds of [0, 1801, 1.5, "10", -1]) {
      const result = await h.run("range", { command: "touch ran", timeoutSeconds });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toContain("nothing was run");
    }
    expect((await h.run("range", { command: "" })).ok).toBe(false);
    expect((await h.run("range", { command: "x".repeat(64 * 1024 + 1) })).ok).toBe(false);
    expect(h.provider.generation("range")).toBe(0);
  });

  it("bounds output and marks the truncation", async () => {
    const result = output(
      await h.run("trunc", { command: "head -c 200000 /dev/zero | tr '\\0' a; echo err >&2" }),
    );
    expect(result.stdout.length).toBe(64 * 1024);
    expect(result.truncated).toBe(true);
    expect(result.stderr).toBe("err\n");
    expect(output(await h.run("trunc", { command: "echo short" })).truncated).toBe(false);
  });

  it("registers the same tool under `shell` and `sandbox_exec`, sharing one queue", async () => {
    const tools = createShellTools(h.provider);
    expect(tools.map((t) => t.id)).toEqual(["shell", "sandbox_exec"]);
    const call = (tool: (typeof tools)[number], command: string) =>
      tool.execute({
        input: { command },
        sessionId: "two-ids",
        turnId: "t",
        toolCallId: command,
        agentId: "a",
        signal: new AbortController().signal,
        reportProgress: async () => {},
      });
    const first = call(tools[0]!, "sleep 0.3; echo 1 >> log");
    const second = call(tools[1]!, "echo 2 >> log; cat log");
    await first;
    expect(output(await second).stdout).toBe("1\n2\n");
  });

  it("does not run a command whose turn was interrupted while it waited in the queue", async () => {
    const controller = new AbortController();
    const first = h.run("queued", { command: "sleep 0.3" });
    const second = h.run("queued", { command: "touch should-not-exist" }, controller.signal);
    controller.abort();
    await first;
    expect((await second).ok).toBe(false);
    expect(output(await h.run("queued", { command: "ls" })).stdout).toBe("");
  });

  it("reports a non-zero exit code as a result, not a failure", async () => {
    expect(output(await h.run("exit", { command: "echo out; exit 3" }))).toMatchObject({
      exitCode: 3,
      stdout: "out\n",
    });
  });
});

describe("lifetime and idle arithmetic (injected clock)", () => {
  let h: Harness;
  let idle: Harness;
  const clock = new ManualClock();
  const idleClock = new ManualClock();
  beforeAll(() => {
    requireBubblewrap();
    // Idle release is kept out of the way here so only the lifetime rule is exercised.
    h = harness({ clock, lifetimeSeconds: 3600, idleReleaseSeconds: 100_000 });
    idle = harness({ clock: idleClock, lifetimeSeconds: 3600, idleReleaseSeconds: 180 });
  });
  afterAll(async () => {
    await h.dispose();
    await idle.dispose();
  });

  it("moves a command that does not fit the remaining lifetime to a fresh computer", async () => {
    await h.run("life", { command: "echo w > w" });
    // 3600 s lifetime, last 120 s reserved: after 2880 s, 600 s (10 minutes) are left.
    clock.advance(2880 * 1000);
    await h.run("life", { command: "true", timeoutSeconds: 600 });
    expect(h.provider.generation("life")).toBe(1);
    const moved = output(await h.run("life", { command: "cat w", timeoutSeconds: 1800 }));
    expect(moved.stdout).toBe("w\n");
    expect(h.provider.generation("life")).toBe(2);
    expect(h.events.filter((e) => e.sessionId === "life").map((e) => e.reason ?? "-")).toEqual([
      "-",
      "lifetime",
      "lifetime",
    ]);
  });

  it("caps timeoutSeconds at what a fresh computer's lifetime allows", async () => {
    // Its own stopped clock: on the system clock a slow start (a loaded machine) leaves a fresh
    // computer less than 480 s, and the second command is moved or refused.
    const short = harness({ clock: new ManualClock(), lifetimeSeconds: 600 });
    try {
      const refused = await short.run("short", { command: "true", timeoutSeconds: 481 });
      expect(refused.ok).toBe(false);
      expect(short.provider.generation("short")).toBe(0);
      expect((await short.run("short", { command: "true", timeoutSeconds: 480 })).ok).toBe(true);
    } finally {
      await short.dispose();
    }
  });

  it("releases on idle and on lifetime end", async () => {
    await idle.run("idle", { command: "true" });
    idleClock.advance(179 * 1000);
    expect(idle.events.some((e) => e.state === "released")).toBe(false);
    idleClock.advance(2 * 1000);
    await new Promise((r) => setTimeout(r, 50));
    expect(idle.events.at(-1)).toMatchObject({ state: "released", reason: "idle", generation: 1 });
    // Used again, then left running with commands spaced under the idle time: lifetime ends it.
    await idle.run("idle", { command: "true" });
    for (let i = 0; i < 21; i++) {
      idleClock.advance(170 * 1000);
      await idle.run("idle", { command: "true", timeoutSeconds: 1 });
    }
    const released = idle.events.filter((e) => e.state === "released").map((e) => e.reason);
    expect(released).toContain("lifetime");
  });

  it("releases on session end through the tool's onSessionEnd", async () => {
    await h.run("end", { command: "true" });
    await h.shell.onSessionEnd?.("end");
    expect(h.events.filter((e) => e.sessionId === "end").at(-1)).toMatchObject({
      state: "released",
      reason: "session_ended",
    });
  });
});
