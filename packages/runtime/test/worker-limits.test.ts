// What bounds a worker process (issue #21: one tool call held 3.6 GiB and started 300
// processes): a call past the memory limit fails saying so, a call that forks is capped (counted
// in the host's process table), the worker's control group carries the configured limits, and
// the runtime keeps working afterwards. Run as a plain worker and a sandboxed one with control
// groups, and a sandboxed one without (rlimits and the V8 heap limit only).

import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpenComputerError } from "@opencomputer/agent";
import { createStaticAgents, type EventRecord } from "@opencomputer/runtime";
import {
  bwrapLauncher,
  createWorkerExecution,
  type WorkerPoolOptions,
} from "@opencomputer/workers";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType, TEST_WORKERS, until } from "./engine/harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-limits/agents.ts", import.meta.url));
const LIMITS = { memoryMiB: 256, maxTasks: 64, cpus: 0.5 };
const MIB = 1024 * 1024;
type Workers = ReturnType<typeof createWorkerExecution>;

let h: Harness;
afterEach(async () => {
  await h?.close();
});

function execution(): Workers {
  return h.runtime.execution as Workers;
}

async function start(workers: WorkerPoolOptions): Promise<string> {
  h = await harness({
    agentsModule: AGENTS,
    execution: "worker",
    workers: { ...TEST_WORKERS, ...workers, limits: LIMITS },
  });
  const dir = join(h.dir, "work");
  mkdirSync(dir);
  return dir;
}

/** Starts a turn whose one step calls `tool`, then answers. */
async function begin(tool: string, dir: string) {
  h.script("test", [{ toolCalls: [{ name: tool, input: { dir } }] }, { text: "ok" }]);
  const { session } = await h.runtime.sessions.create({ agentId: "limits" });
  const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: tool });
  return { sessionId: session.id, turnId };
}

async function finish(turn: { sessionId: string; turnId: string }): Promise<EventRecord[]> {
  await h.runtime.sessions.waitForTurn(turn.sessionId, turn.turnId, { timeoutMs: 60_000 });
  return h.events(turn.sessionId);
}

/** The next call, on whatever worker the pool gives it, completes. */
async function stillWorks(dir: string): Promise<void> {
  const events = await finish(await begin("whoami", dir));
  expect(ofType(events, "tool.completed")).toHaveLength(1);
  expect(ofType(events, "turn.completed")).toHaveLength(1);
}

/** Host pids of the processes whose command line starts with `marker`. */
function hostProcesses(marker: string): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(marker)) pids.push(Number(pid));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

function readLimit(paths: string[], ...names: string[]): string | undefined {
  for (const path of paths) {
    for (const name of names) {
      if (existsSync(join(path, name))) return readFileSync(join(path, name), "utf8").trim();
    }
  }
  return undefined;
}

describe.each([
  ["a plain worker with a control group", {}, true],
  ["a sandboxed worker with a control group", { sandbox: bwrapLauncher() }, true],
  [
    "a sandboxed worker without control groups",
    { sandbox: bwrapLauncher(), cgroupRoot: false },
    false,
  ],
] as const)("%s", (_name, workers, cgroups) => {
  it("a call past the memory limit fails saying so; the next call works", async () => {
    const dir = await start(workers);
    // Without a group only the V8 heap is bounded, so that case grows the heap.
    const events = await finish(await begin(cgroups ? "buffer_hog" : "heap_hog", dir));
    expect(execution().cgroups()?.enabled).toBe(cgroups);
    const failed = ofType(events, "tool.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data.message).toMatch(
      /failed: its worker was stopped: it reached its memory limit/,
    );
    expect(failed[0]!.data.message).toContain(cgroups ? "256 MiB" : "192 MiB");
    // The call failed (running it again would only hit the limit again); the turn went on.
    expect(ofType(events, "runtime.disconnected")).toHaveLength(0);
    expect(ofType(events, "turn.completed")).toHaveLength(1);
    await stillWorks(dir);
  }, 120_000);

  it("a call that starts many processes is capped; the next call works", async () => {
    const dir = await start(workers);
    const turn = await begin("forks", dir);
    let progress: Record<string, unknown> | undefined;
    await until(async () => {
      progress = ofType(await h.events(turn.sessionId), "tool.progress")[0]?.data;
      return progress !== undefined;
    }, 60_000);
    const { started, refused } = progress!.metadata as { started: number; refused: string };
    const marker = `oc-forks-${turn.sessionId}`;
    const onHost = hostProcesses(marker);
    expect(onHost).toHaveLength(started);
    // Node's own threads count against the same limit, so fewer sleepers than maxTasks start.
    expect(started).toBeGreaterThan(0);
    expect(started).toBeLessThan(LIMITS.maxTasks);
    expect(refused).toBe("EAGAIN");
    for (const pid of onHost) process.kill(pid, "SIGKILL");
    const events = await finish(turn);
    expect(ofType(events, "tool.completed")[0]!.data.output).toEqual({ started, refused });
    await stillWorks(dir);
  }, 120_000);

  it.runIf(cgroups)(
    "the worker's control group holds it, with the configured limits",
    async () => {
      const dir = await start(workers);
      await stillWorks(dir);
      const [worker] = execution().workers();
      const paths = worker!.groupPaths;
      expect(paths.length).toBeGreaterThan(0);
      expect(readLimit(paths, "memory.max", "memory.limit_in_bytes")).toBe(String(256 * MIB));
      expect(readLimit(paths, "pids.max")).toBe("64");
      expect(readLimit(paths, "cpu.max", "cpu.cfs_quota_us")).toMatch(/^50000( 100000)?$/);
      // The process the runtime started (bwrap, or Node itself) is in every one of them.
      const own = readFileSync(`/proc/${worker!.hostPid}/cgroup`, "utf8");
      for (const path of paths) expect(own).toContain(path.split("/").slice(-2).join("/"));
    },
    60_000,
  );
});

describe("worker limit options", () => {
  it("a bad limit or network is refused with invalid_option naming the field", async () => {
    h = await harness({ agentsModule: AGENTS });
    const bad: Array<[WorkerPoolOptions, string]> = [
      [{ limits: { memoryMiB: 64 } }, "workers.limits.memoryMiB"],
      [{ limits: { maxTasks: 1.5 } }, "workers.limits.maxTasks"],
      [{ limits: { cpus: 0 } }, "workers.limits.cpus"],
      [{ limits: { maxFileMiB: "big" as unknown as number } }, "workers.limits.maxFileMiB"],
      [{ limits: { nice: 1 } as never }, "workers.limits.nice"],
      [{ limits: 5 as never }, "workers.limits"],
      [{ network: "internet" as never }, "workers.network"],
    ];
    for (const [workers, path] of bad) {
      let error: unknown;
      try {
        h.newRuntime({ execution: "worker", workers });
      } catch (e) {
        error = e;
      }
      expect(error, path).toBeInstanceOf(OpenComputerError);
      expect((error as OpenComputerError).code).toBe("invalid_option");
      expect((error as OpenComputerError).path).toBe(path);
      expect((error as Error).message).toContain(path);
    }
    const agents = createStaticAgents({ projectDir: h.dir, agents: {} });
    expect(() => createWorkerExecution({ agents, limits: { memoryMiB: 0 } })).toThrow(
      /workers\.limits\.memoryMiB/,
    );
    expect(() =>
      h.newRuntime({
        execution: "worker",
        workers: { network: "host", limits: { memoryMiB: 2048, cpus: 0.25 } },
      }),
    ).not.toThrow();
  });
});
