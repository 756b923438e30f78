// A worker whose control plane is SIGKILLed exits at once and quietly: no ERR_IPC_CHANNEL_CLOSED
// or EPIPE stack trace from a heartbeat that raced the channel's close (packages/workers/src/
// child.ts). The worker's stderr goes to a file, so what it says after its parent died is seen.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";

const PARENT = join(import.meta.dirname, "fixtures/quiet-worker-parent.ts");
let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function gone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // A zombie has stopped running; it waits only for whoever adopted it to reap it.
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
    if (stat === "" || / Z /.test(stat.slice(stat.lastIndexOf(")")))) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

it.each([1, 2, 3, 4, 5])(
  "a worker exits quietly when its control plane dies (run %i)",
  async () => {
    dir = mkdtempSync(join(tmpdir(), "oc-quiet-"));
    const stderr = join(dir, "worker.stderr");
    const parent = spawn(process.execPath, ["--import", "tsx", PARENT, stderr], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const pid = await new Promise<number>((done, fail) => {
      parent.stdout!.on("data", (chunk) => {
        const match = /worker (\d+)/.exec(String(chunk));
        if (match) done(Number(match[1]));
      });
      parent.once("exit", (code) => fail(new Error(`parent exited ${code} before its worker ran`)));
    });
    // Heartbeats every millisecond for a while, then the control plane is gone mid-stream.
    await new Promise((r) => setTimeout(r, 100));
    parent.kill("SIGKILL");
    const killed = Date.now();
    expect(await gone(pid, 5000)).toBe(true);
    console.log(`worker gone ${Date.now() - killed} ms after its control plane's SIGKILL`);
    const said = readFileSync(stderr, "utf8");
    expect(said).not.toMatch(/ERR_IPC_CHANNEL_CLOSED|EPIPE|\n\s+at /);
    expect(said).toBe("");
  },
);
