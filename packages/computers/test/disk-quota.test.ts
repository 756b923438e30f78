import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Harness, harness, output, requireBubblewrap } from "./helpers.ts";

const MIB = 1024 ** 2;

describe("disk quota", () => {
  let h: Harness;
  beforeAll(() => {
    requireBubblewrap();
    h = harness({ limits: { workspaceBytes: 20 * MIB, workspaceEntries: 500, tmpBytes: 8 * MIB } });
  });
  afterAll(() => h.dispose());

  it("/tmp is a tmpfs of the configured size: writing past it fails with ENOSPC", async () => {
    const result = output(
      await h.run("tmp", { command: "head -c 12M /dev/zero > /tmp/big; echo $?" }),
    );
    expect(result.stdout).toBe("1\n");
    expect(result.stderr).toContain("No space left on device");
  });

  it("stops a command that writes more than the workspace quota, with a clear error", async () => {
    // 1 MiB at a time, far past 20 MiB; then it would idle until its timeout.
    const command = "for i in $(seq 1 60); do head -c 1M /dev/zero > f$i; done; sleep 100";
    const result = await h.run("fill", { command, timeoutSeconds: 60 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain("over its disk quota");
    expect(result.message).toContain("of its 20.0 MiB disk quota");
    expect(result.message).toContain("Delete files in /workspace");
    const released = h.events.find((e) => e.sessionId === "fill" && e.state === "released");
    expect(released?.reason).toBe("disk_quota");
    // Cleaning up is always allowed, even above the quota.
    const cleaned = output(await h.run("fill", { command: "rm -f f*; ls | wc -l" }));
    expect(cleaned.stdout).toBe("0\n");
  });

  it("fails a command that ends over the quota before the next check, and says how", async () => {
    const result = await h.run("burst", {
      command: "head -c 19M /dev/zero > a; head -c 19M /dev/zero > b",
    });
    expect(result.ok).toBe(false);
    // Usually found by the check right after the command (it ends within the first interval).
    if (!result.ok) expect(result.message).toMatch(/over its disk quota: \/workspace uses/);
  });

  it("counts files too: more entries than the quota stop the computer", async () => {
    const result = await h.run("many", { command: "mkdir d && cd d && touch $(seq 1 800)" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain("more than 500 files and directories");
  });

  it("stops a computer whose background process fills the workspace between commands", async () => {
    output(
      await h.run("bg", {
        command:
          "(sleep 0.5; for i in $(seq 1 40); do head -c 1M /dev/zero > g$i; done; sleep 100) >/dev/null 2>&1 &",
      }),
    );
    await vi.waitFor(
      () => {
        const released = h.events.find((e) => e.sessionId === "bg" && e.state === "released");
        expect(released?.reason).toBe("disk_quota");
      },
      { timeout: 15_000, interval: 200 },
    );
  });
});
