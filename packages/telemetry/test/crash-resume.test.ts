// A turn's trace across a crash, at engine level: a runtime in a child process runs a turn with
// OTLP tracing to the test's receiver and is SIGKILLed while the turn's tool call runs; a second
// runtime (this process, its own tracer) takes the session over, runs the call again and settles
// the turn. The spans both processes exported carry the one trace id the turn id derives, and the
// turn's root span (exported at settlement by the second) is their common ancestor.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { type OtlpReceiver, startOtlpReceiver } from "@opencomputer/testkit/otlp-receiver";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOtlpTracing, traceIdOf, turnSpanIdOf } from "../src/index.ts";
import { crashAgent, crashModels } from "./fixtures/crash-agent.ts";

let receiver: OtlpReceiver;
let dir: string;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
  dir = mkdtempSync(join(tmpdir(), "oc-trace-crash-"));
});
afterEach(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a turn's trace across a crash", () => {
  it("spans from the killed runtime and the one that resumed the turn share its trace id", {
    timeout: 90_000,
  }, async () => {
    const marker = join(dir, "started");
    mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
    writeFileSync(
      join(dir, "opencomputer", "scripts", "crash.json"),
      JSON.stringify({
        steps: [{ toolCalls: [{ name: "slow", input: { marker } }] }, { text: "done" }],
      }),
    );
    const db = join(dir, "data.db");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "fixtures/crash-child.ts"), db, dir],
      {
        env: {
          ...process.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_SERVICE_NAME: "first-runtime",
        },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += String(chunk);
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    await until(() => out.includes("\n") && existsSync(marker), "the child's tool call");
    const { sessionId, turnId } = JSON.parse(out.trim()) as { sessionId: string; turnId: string };
    // The spans the first runtime ended (its model call) reach the receiver before it dies.
    const fromFirst = () => receiver.spans.filter((s) => s.service === "first-runtime");
    await until(() => fromFirst().length > 0, "the first runtime's spans");
    child.kill("SIGKILL");
    await exited;

    const tracing = createOtlpTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "second-runtime" },
    })!;
    const store = createSqliteStore({ path: db });
    const runtime = createRuntime({
      store,
      agents: createStaticAgents({ projectDir: dir, agents: { crash: crashAgent } }),
      models: crashModels(),
      tracing,
      leaseMs: 500,
      log: { error: () => {}, warn: () => {} },
    });
    try {
      await runtime.start();
      const turn = await runtime.sessions.waitForTurn(sessionId, turnId, { timeoutMs: 30_000 });
      expect(turn.status).toBe("completed");
      const calls = await store.listToolCalls(sessionId, turnId);
      expect(calls.map((c) => [c.tool, c.status, c.output])).toEqual([
        ["slow", "completed", { resumed: true }],
      ]);
    } finally {
      await runtime.close();
      await tracing.close();
      await store.close();
    }

    expect(receiver.refused).toEqual([]);
    const traceId = traceIdOf(turnId);
    const first = fromFirst();
    const second = receiver.spans.filter((s) => s.service === "second-runtime");
    expect(first.map((s) => s.name)).toContain("chat script/crash");
    expect(second.map((s) => s.name)).toEqual(
      expect.arrayContaining(["invoke_agent crash", "execute_tool slow", "chat script/crash"]),
    );
    for (const span of [...first, ...second]) expect(span.traceId).toBe(traceId);
    // One root, the turn's span, exported once the turn settled; every other span descends from it.
    const roots = receiver.spans.filter((s) => s.parentSpanId === undefined);
    expect(roots.map((s) => [s.name, s.spanId])).toEqual([
      ["invoke_agent crash", turnSpanIdOf(turnId)],
    ]);
    // Every span of the resuming runtime descends from that root. The killed runtime's step and
    // run spans never ended (so were never exported); its chat span still names its step.
    const parents = new Map(receiver.spans.map((s) => [s.spanId, s.parentSpanId]));
    for (const span of second) {
      let at: string | undefined = span.spanId;
      for (let hops = 0; at && at !== roots[0]!.spanId && hops < 10; hops++) at = parents.get(at);
      expect(at).toBe(roots[0]!.spanId);
    }
    expect(second.map((s) => s.name)).toContain("step 1 resumed");
    for (const span of first) expect(span.parentSpanId).toBeDefined();
  });
});
