// Workers that die or hang, and what a worker can see of the control plane.

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import { bwrapLauncher, createWorkerExecution } from "@opencomputer/workers";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType, TEST_WORKERS, types, until } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-agents.ts", import.meta.url));
const BROKEN = fileURLToPath(new URL("./fixtures/worker-broken-module.ts", import.meta.url));
type Workers = ReturnType<typeof createWorkerExecution>;

let h: Harness;
afterEach(async () => {
  await h?.close();
});

function workerPids(runtime: Harness["runtime"]): number[] {
  return (runtime.execution as Workers).workers().map((w) => w.hostPid!);
}

describe("a worker lost mid-turn", () => {
  it("killed with SIGKILL mid-call: replaced, the turn resumes and the call runs again with its id", async () => {
    h = await harness({ agentsModule: AGENTS, execution: "worker", workers: TEST_WORKERS });
    const marker = join(h.dir, "slow.pid");
    h.script("test", [{ toolCalls: [{ name: "slow_once", input: { marker } }] }, { text: "done" }]);
    const { session } = await h.runtime.sessions.create({ agentId: "support" });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    await until(() => {
      try {
        return readFileSync(marker, "utf8").length > 0;
      } catch {
        return false;
      }
    }, 15_000);
    const [first] = workerPids(h.runtime);
    process.kill(first!, "SIGKILL");
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("completed");
    const events = await h.events(session.id);
    const started = ofType(events, "tool.started");
    expect(started).toHaveLength(2);
    expect(started[1]!.data).toMatchObject({ callId: started[0]!.data.callId, attempt: 2 });
    expect(ofType(events, "runtime.disconnected")).toHaveLength(1);
    expect(ofType(events, "tool.completed")[0]!.data.output).toEqual({
      attempt: "again",
      toolCallId: started[0]!.data.callId,
    });
    // One turn.started for the first run, one (resumed) after the loss; one terminal event.
    expect(ofType(events, "turn.started")[1]!.data).toEqual({ resumed: true });
    expect(
      types(events).filter(
        (t) => t.startsWith("turn.") && t !== "turn.queued" && t !== "turn.started",
      ),
    ).toEqual(["turn.completed"]);
    expect(workerPids(h.runtime)[0]).not.toBe(first);
  });

  it("a call that kills its worker every time fails the turn runtime_lost after three losses", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution: "worker",
      workers: TEST_WORKERS,
      steps: [{ toolCalls: [{ name: "always_crash", input: {} }] }, { text: "never" }],
    });
    const { events } = await h.run("crash");
    expect(ofType(events, "runtime.disconnected")).toHaveLength(2);
    expect(ofType(events, "tool.started").map((e) => e.data.attempt ?? 1)).toEqual([1, 2, 3]);
    expect(ofType(events, "turn.failed")[0]!.data).toMatchObject({
      code: "runtime_lost",
      message: "The agent's worker process stopped 3 times while running this turn",
    });
    expect(ofType(events, "tool.failed")[0]!.data).toMatchObject({
      tool: "always_crash",
      settledBy: expect.any(String),
    });
  });

  it("a worker that stops answering (no heartbeat) is killed and replaced", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution: "worker",
      workers: { timings: { heartbeatMs: 50, heartbeatTimeoutMs: 600 } },
      steps: [{ toolCalls: [{ name: "spin", input: {} }] }, { text: "never" }],
    });
    const { events } = await h.run("spin");
    expect(ofType(events, "turn.failed")[0]!.data.code).toBe("runtime_lost");
    expect(JSON.stringify(h.logs)).toContain("no heartbeat for 600 ms");
    // The next turn gets a fresh, working worker.
    h.script("test", [
      { toolCalls: [{ name: "lookup_order", input: { orderId: "B2" } }] },
      { text: "ok" },
    ]);
    const next = await h.run("again");
    expect(ofType(next.events, "tool.completed")[0]!.data.output).toMatchObject({ orderId: "B2" });
  });

  it("a call past its deadline gets its worker replaced, like a hung one", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution: "worker",
      workers: { timings: { ...TEST_WORKERS.timings, callDeadlineMs: 400 } },
      steps: [{ toolCalls: [{ name: "wait_abort", input: { marker: "/dev/null" } }] }],
    });
    const { events } = await h.run("wait");
    expect(ofType(events, "tool.started")).toHaveLength(3);
    expect(ofType(events, "turn.failed")[0]!.data.code).toBe("runtime_lost");
    expect(JSON.stringify(h.logs)).toContain("took longer than its deadline of 400 ms");
  });

  it("an idle worker is stopped quietly; the next turn starts another", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution: "worker",
      workers: { timings: { ...TEST_WORKERS.timings, idleMs: 300 } },
      steps: [{ toolCalls: [{ name: "lookup_order", input: { orderId: "D4" } }] }, { text: "ok" }],
    });
    const first = await h.run("one");
    const pid = (ofType(first.events, "tool.completed")[0]!.data.output as { pid: number }).pid;
    await until(() => workerPids(h.runtime).length === 0, 10_000);
    const second = await h.run("two");
    const output = ofType(second.events, "tool.completed")[0]!.data.output as { pid: number };
    expect(output.pid).not.toBe(pid);
    expect(JSON.stringify(h.logs)).not.toContain("agent worker lost");
  });

  it("a module that fails as it loads fails the turn deployment_invalid, none of it runs", async () => {
    h = await harness({ agentsModule: AGENTS, steps: [{ text: "never" }] });
    const agents = createStaticAgents({
      projectDir: h.dir,
      agents: { agent: () => "never" },
      modules: { agent: BROKEN },
    });
    const log = { error() {}, warn() {} };
    const workers = createWorkerExecution({ agents, log });
    const runtime = createRuntime({
      store: h.store,
      agents,
      models: createModelResolver({
        providers: { script: createScriptModel },
        override: "script/test",
      }),
      execution: workers,
      log,
    });
    try {
      const { session } = await runtime.sessions.create({ agentId: "agent" });
      const { turnId } = await runtime.sessions.sendTurn(session.id, { text: "hi" });
      await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
      const failed = ofType(await h.events(session.id), "turn.failed")[0]!.data;
      expect(failed.code).toBe("deployment_invalid");
      expect(failed.message).toMatch(/its worker failed to load: fails at import/);
    } finally {
      await runtime.close();
      await workers.close();
    }
  });
});

/** The pids under `pid` (bwrap's children), as the host sees them. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    for (const child of children ? children.split(" ").map(Number) : []) {
      out.push(child, ...descendants(child));
    }
  }
  return out;
}

const SECRET = "sk-live-do-not-leak-7f3a";

describe.each([
  ["plain worker", {}],
  ["sandboxed worker", { sandbox: bwrapLauncher() }],
] as const)("what a %s sees", (_name, sandbox) => {
  it("no secret in its environment; the control plane's environment is out of reach", async () => {
    process.env.OC_TEST_SECRET = SECRET;
    try {
      h = await harness({
        agentsModule: AGENTS,
        execution: "worker",
        workers: { ...TEST_WORKERS, ...sandbox },
        steps: [
          { toolCalls: [{ name: "inspect_env", input: { pid: process.pid } }] },
          { text: "ok" },
        ],
      });
      const { events } = await h.run("env");
      const output = ofType(events, "tool.completed")[0]!.data.output as Record<string, string>;
      expect(JSON.stringify(output.env)).not.toContain(SECRET);
      expect(output.own).not.toContain(SECRET);
      // The IPC channel belongs to the worker's own code, not the agent's.
      expect(output.canSend).toBe(false);
      // The worker's environment as the host sees it.
      const [hostPid] = workerPids(h.runtime);
      for (const pid of [hostPid!, ...descendants(hostPid!)]) {
        expect(readFileSync(`/proc/${pid}/environ`, "utf8")).not.toContain(SECRET);
      }
      if ("sandbox" in sandbox) {
        // Its own pid namespace: the control plane's pid is not there (or is someone else).
        expect(output.other).not.toContain(SECRET);
        expect(Number(output.pid)).toBeLessThan(10);
      }
    } finally {
      delete process.env.OC_TEST_SECRET;
    }
  });
});

describe("a sandboxed worker", () => {
  it("runs every process under the seccomp filter, as PID 1 of its namespace, and Node works", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution: "worker",
      workers: { ...TEST_WORKERS, sandbox: bwrapLauncher() },
      steps: [
        { toolCalls: [{ name: "inspect_env", input: { pid: process.pid } }] },
        { text: "ok" },
      ],
    });
    const { events } = await h.run("env");
    const output = ofType(events, "tool.completed")[0]!.data.output as Record<string, string>;
    // No bwrap init inside: the worker's Node is PID 1, so nothing in the sandbox is unfiltered.
    expect(Number(output.pid)).toBe(1);
    const [hostPid] = workerPids(h.runtime);
    const inside = descendants(hostPid!);
    expect(inside.length).toBeGreaterThan(0);
    for (const pid of inside) {
      // 2: filter mode (bwrap itself, outside, is not filtered).
      expect(readFileSync(`/proc/${pid}/status`, "utf8")).toMatch(/^Seccomp:\s+2$/m);
    }
  });

  it("cannot read the store, the key file or anything outside what it was given", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution: "worker",
      workers: { ...TEST_WORKERS, sandbox: bwrapLauncher() },
    });
    const keys = join(h.dir, "keys.json");
    writeFileSync(keys, JSON.stringify({ secret: SECRET }));
    const targets = [join(h.dir, "data.db"), keys, "/etc/shadow", "/root/.bash_history"];
    h.script("test", [
      { toolCalls: targets.map((path) => ({ name: "read_file", input: { path } })) },
      { text: "ok" },
    ]);
    const { events } = await h.run("read");
    const failed = ofType(events, "tool.failed");
    expect(failed).toHaveLength(targets.length);
    for (const f of failed) expect(f.data.message).toMatch(/ENOENT|EACCES/);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  it.each([
    ["by default", undefined, [{ status: 200 }], ["fetch failed"]],
    ['with network: "host"', "host", [{ status: 200 }, { status: 200 }], []],
  ] as const)(
    "reaches only the egress gateway %s (microvm always); microvm cannot select ask",
    async (_name, network, defaultOk, defaultFailed) => {
      const listen = async () => {
        const server = createServer((_req, res) => res.end("hi"));
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return { server, port: (server.address() as AddressInfo).port };
      };
      // A stand-in for the egress gateway (its URL is what the runtime sends with each call),
      // and some other service on the host's loopback.
      const gateway = await listen();
      const other = await listen();
      try {
        h = await harness({
          agentsModule: AGENTS,
          execution: "worker",
          workers: { ...TEST_WORKERS, sandbox: bwrapLauncher(), ...(network ? { network } : {}) },
          egress: () => ({ gatewayUrl: `http://127.0.0.1:${gateway.port}/`, token: "tok" }),
          steps: [
            {
              toolCalls: [
                { name: "connect", input: { port: gateway.port } },
                { name: "connect", input: { port: other.port } },
              ],
            },
            { text: "ok" },
          ],
        });
        const turnOf = async (agentId: string, executionMode: "default" | "microvm") => {
          const { session } = await h.runtime.sessions.create({ agentId, executionMode });
          const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "hi" });
          await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
          return h.events(session.id);
        };
        const open = await turnOf("support", "default");
        expect(ofType(open, "tool.completed").map((e) => e.data.output)).toEqual(defaultOk);
        expect(ofType(open, "tool.failed").map((e) => e.data.message)).toEqual(defaultFailed);
        const closed = await turnOf("support", "microvm");
        expect(ofType(closed, "tool.completed").map((e) => e.data.output)).toEqual([
          { status: 200 },
        ]);
        expect(ofType(closed, "tool.failed").map((e) => e.data.message)).toEqual(["fetch failed"]);
        expect(ofType(closed, "agent.rendered")[0]!.data.enabledTools).not.toContain("ask");
        const asked = await turnOf("asker", "microvm");
        expect(ofType(asked, "turn.failed")[0]!.data).toMatchObject({
          code: "agent_failed",
          message: 'Agent asker: sessions with executionMode "microvm" cannot select ask',
        });
      } finally {
        gateway.server.close();
        other.server.close();
      }
    },
  );

  it("without a sandbox, microvm sessions are refused with a clear error", async () => {
    h = await harness({ agentsModule: AGENTS, execution: "worker", workers: TEST_WORKERS });
    const { session } = await h.runtime.sessions.create({
      agentId: "support",
      executionMode: "microvm",
    });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "hi" });
    await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(ofType(await h.events(session.id), "turn.failed")[0]!.data).toMatchObject({
      code: "deployment_invalid",
      message: expect.stringContaining('executionMode "microvm" needs a sandbox'),
    });
  });
});
