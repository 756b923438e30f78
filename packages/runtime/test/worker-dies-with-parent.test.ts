// A worker must not keep running a call once its control plane is gone: the restarted runtime
// runs that call again, and two copies of one call must never run at once (issue #30). A tool
// that ignores its abort signal ticks in a worker; its control plane is SIGKILLed; the ticking
// stops and no process of the worker is left, with plain and with sandboxed workers.

import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapAvailable } from "@opencomputer/workers";
import { afterEach, describe, expect, it } from "vitest";

const PARENT = join(import.meta.dirname, "fixtures/ticking-parent.ts");
let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ticks = () => {
  const file = join(dir, "ticks", "ticks.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function running(pid: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/ Z /.test(stat.slice(stat.lastIndexOf(")"))); // a zombie has stopped running
  } catch {
    return false;
  }
}

/**
 * The worker's host processes: a plain worker's own pid (the tool wrote it); for a sandboxed one,
 * its bubblewrap, whose arguments bind the project, and so the whole sandbox it holds.
 */
function workerProcesses(project: string, mode: "plain" | "sandboxed"): string[] {
  if (mode === "plain") {
    const pid = readFileSync(join(project, "ticks", "ticks.log.pid"), "utf8");
    return running(pid) ? [pid] : [];
  }
  const live = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry) && running(entry));
  const parentOf = (pid: string) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? "";
    } catch {
      return "";
    }
  };
  const sandboxes = new Set(
    live.filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(project);
      } catch {
        return false;
      }
    }),
  );
  // Everything below them: the worker's Node (PID 1 inside) and whatever the tool started.
  for (let grew = true; grew; ) {
    grew = false;
    for (const pid of live) {
      if (!sandboxes.has(pid) && sandboxes.has(parentOf(pid))) {
        sandboxes.add(pid);
        grew = true;
      }
    }
  }
  return [...sandboxes];
}

const modes = bwrapAvailable() ? (["plain", "sandboxed"] as const) : (["plain"] as const);

describe.each(modes)("a %s worker whose control plane is SIGKILLed", (mode) => {
  it("stops running its call, and nothing of it is left", async () => {
    dir = mkdtempSync(join(tmpdir(), "oc-tick-"));
    chmodSync(dir, 0o755); // a root runtime's sandbox runs as uid 65534
    mkdirSync(join(dir, "ticks"), { mode: 0o777 });
    chmodSync(join(dir, "ticks"), 0o777);
    mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
    writeFileSync(
      join(dir, "opencomputer", "scripts", "test.json"),
      JSON.stringify({
        steps: [
          {
            toolCalls: [
              {
                name: "tick",
                input: {
                  file: mode === "plain" ? join(dir, "ticks", "ticks.log") : "/tmp/ticks.log",
                },
              },
            ],
          },
        ],
      }),
    );
    const parent = spawn(process.execPath, ["--import", "tsx", PARENT, dir, mode], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((r) => parent.once("exit", r));
    const until = Date.now() + 30_000;
    // A sandboxed worker cannot write the project: it ticks into its own /tmp, and is seen
    // running by its processes (the sandbox's and every one below it).
    const started = () =>
      mode === "plain" ? ticks() >= 3 : workerProcesses(dir, mode).length >= 2;
    while (!started()) {
      if (Date.now() > until) throw new Error("the tool never started");
      await sleep(50);
    }
    if (mode === "sandboxed") await sleep(500);
    expect(workerProcesses(dir, mode).length).toBeGreaterThan(0);
    parent.kill("SIGKILL");
    const killed = Date.now();
    await exited;
    // Gone: no process of the worker left on the host (the sandbox's whole pid namespace too).
    while (workerProcesses(dir, mode).length > 0) {
      if (Date.now() - killed > 5000)
        throw new Error(`left running: ${workerProcesses(dir, mode).join(", ")}`);
      await sleep(20);
    }
    console.log(`${mode} worker gone ${Date.now() - killed} ms after its control plane's SIGKILL`);
    if (mode === "plain") {
      // And its call stopped with it: no tick lands afterwards. (A sandboxed call had no process
      // left to run in, which the loop above proved.)
      const after = ticks();
      await sleep(500);
      expect(ticks()).toBe(after);
    }
  });
});
