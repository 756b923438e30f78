// An MCP call is a durable tool call: when the runtime running it dies mid-call, the runtime
// that takes the session over runs the started call again with the same toolCallId (attempt 2,
// against a fresh client of the server), and the turn completes with its output.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineMcpServer, useMcpServer, useModel } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { startTestMcpServer, type TestMcpServer } from "@opencomputer/testkit/mcp-server";
import { afterAll, expect, it } from "vitest";
import { createMcpConnector } from "../src/index.ts";

let dir: string;
let server: TestMcpServer;
let store: ReturnType<typeof createSqliteStore>;
const runtimes: Array<ReturnType<typeof createRuntime>> = [];

afterAll(async () => {
  for (const runtime of runtimes) await runtime.close();
  await store?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("a runtime that takes the session over runs the started MCP call again, once", async () => {
  dir = mkdtempSync(join(tmpdir(), "oc-mcp-durable-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "durable.json"),
    JSON.stringify({
      steps: [{ toolCalls: [{ name: "mcp__docs__slow", input: {} }] }, { text: "done" }],
    }),
  );
  server = await startTestMcpServer();
  store = createSqliteStore({ path: join(dir, "data.db") });
  const docs = defineMcpServer({ id: "docs", url: server.url });
  const agent = () => {
    useModel("script/durable");
    useMcpServer(docs);
    return "Wait for the slow tool.";
  };
  const newRuntime = () => {
    const runtime = createRuntime({
      store,
      agents: createStaticAgents({ projectDir: dir, agents: { agent } }),
      models: createModelResolver({ providers: { script: createScriptModel }, override: "" }),
      mcp: { connector: createMcpConnector({ allowLoopbackHttp: true }) },
      leaseMs: 200,
      recoveryIntervalMs: 50,
    });
    runtimes.push(runtime);
    return runtime;
  };
  const first = newRuntime();
  await first.start();
  const { session } = await first.sessions.create({ agentId: "agent" });
  const { turnId } = await first.sessions.sendTurn(session.id, { text: "go" });
  await server.slowStarted;
  // The first runtime dies mid-call: it stops renewing its lease and never writes again.
  await first.close();
  const second = newRuntime();
  await second.start();
  for (let i = 0; i < 400 && (server.calls.slow ?? 0) < 2; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  server.releaseSlow();
  const turn = await second.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
  expect(turn.status).toBe("completed");
  expect(server.calls.slow).toBe(2);
  const events = await store.readEvents(session.id, 0, 500);
  const started = events
    .filter((e) => e.type === "tool.started")
    .map((e) => e.data as Record<string, unknown>);
  expect(started).toHaveLength(2);
  expect(started[1]).toMatchObject({ callId: started[0]?.callId, attempt: 2 });
  const completed = events.filter((e) => e.type === "tool.completed");
  expect(completed.map((e) => (e.data as { output: unknown }).output)).toEqual(["slow done"]);
  expect(events.filter((e) => e.type === "runtime.disconnected")).toHaveLength(1);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
});
