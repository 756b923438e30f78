import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Harness,
  harness,
  hostProcesses,
  output,
  requireBubblewrap,
  sleep,
} from "./helpers.ts";

// A SIGSTOP'd process still dies on SIGKILL, so it cannot make a stop unconfirmable; a v1
// freezer cgroup can: frozen tasks do not exit until thawed, so the namespace init cannot finish.
const FREEZER = "/sys/fs/cgroup/freezer";

describe("a computer that stops answering", () => {
  let h: Harness;
  const group = `${FREEZER}/oc-computers-test-${randomUUID()}`;
  beforeAll(() => {
    requireBubblewrap();
    h = harness({ confirmStopMs: 1000 });
  });
  afterAll(async () => {
    if (existsSync(group)) {
      writeFileSync(`${group}/freezer.state`, "THAWED");
      await sleep(200);
      rmdirSync(group);
    }
    await h.dispose();
  });

  it("fails with outcome unknown and the next command runs on a fresh generation", async () => {
    expect(existsSync(FREEZER), "this test needs the v1 freezer cgroup at " + FREEZER).toBe(true);
    output(await h.run("frozen", { command: "echo kept > kept" }));
    const pending = h.run("frozen", { command: "sleep 1050", timeoutSeconds: 2 });
    await sleep(600);
    const [pid] = hostProcesses(["sleep", "1050"]);
    expect(pid).toBeDefined();
    mkdirSync(group);
    writeFileSync(`${group}/cgroup.procs`, String(pid));
    writeFileSync(`${group}/freezer.state`, "FROZEN");

    const result = await pending;
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain("Outcome unknown");
      expect(result.message).toContain("sleep 1050");
      expect(result.message).not.toContain("were stopped");
    }
    expect(h.events.at(-1)).toMatchObject({
      generation: 1,
      state: "released",
      reason: "unresponsive",
    });

    const next = output(await h.run("frozen", { command: "cat kept; echo fresh" }));
    expect(next.stdout).toBe("kept\nfresh\n");
    expect(h.provider.generation("frozen")).toBe(2);
    // The uncertain command was not re-run on its own.
    expect(hostProcesses(["sleep", "1050"])).toEqual([pid]);
  });

  it("a SIGSTOP'd sandbox is still confirmed stopped (SIGKILL ends stopped processes)", async () => {
    const pending = h.run("stopped", {
      command: "setsid sleep 1051 & sleep 1052",
      timeoutSeconds: 2,
    });
    await sleep(600);
    const pids = [...hostProcesses(["sleep", "1051"]), ...hostProcesses(["sleep", "1052"])];
    expect(pids.length).toBe(2);
    for (const pid of pids) process.kill(pid, "SIGSTOP");
    const result = await pending;
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain("timed out after 2s");
    expect([...hostProcesses(["sleep", "1051"]), ...hostProcesses(["sleep", "1052"])]).toEqual([]);
  });
});
