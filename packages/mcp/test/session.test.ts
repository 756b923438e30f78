// MCP servers in sessions, end to end in one process: a scripted model calls the tools of real
// MCP servers (made with the SDK) that the runtime's client reached, directly or through the
// egress gateway with a connection's bearer secret. Every event is checked against the protocol.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  bearer,
  defineConnection,
  defineMcpServer,
  defineTool,
  useMcpServer,
  useModel,
  useSecret,
  useTool,
} from "@opencomputer/agent";
import { connectionDeclaration } from "@opencomputer/agent/internal";
import {
  createEgressGateway,
  FileSecretStore,
  gatewayEgressSource,
} from "@opencomputer/connections";
import { createModelResolver, createScriptModel, type ScriptStep } from "@opencomputer/models";
import { eventIssues } from "@opencomputer/protocol";
import { createRuntime, createStaticAgents, type EventRecord } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { startTestMcpServer, type TestMcpServer } from "@opencomputer/testkit/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpConnector } from "../src/index.ts";

const SECRET = "mcp_bearer_4c1d_never_log_me";
let dir: string;
let docs: TestMcpServer;
let guarded: TestMcpServer;
let fragile: TestMcpServer;
let store: ReturnType<typeof createSqliteStore>;
let gateway: ReturnType<typeof createEgressGateway>;
let runtime: ReturnType<typeof createRuntime>;
const logs: string[] = [];

function script(name: string, steps: ScriptStep[]) {
  writeFileSync(join(dir, "opencomputer", "scripts", `${name}.json`), JSON.stringify({ steps }));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "oc-mcp-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  docs = await startTestMcpServer();
  guarded = await startTestMcpServer({ bearer: SECRET });
  fragile = await startTestMcpServer();

  const docsServer = defineMcpServer({ id: "docs", url: docs.url });
  const auth = defineConnection({
    id: "guarded-auth",
    origin: new URL(guarded.url).origin,
    headers: { authorization: bearer(useSecret("GUARDED_TOKEN")) },
  });
  const guardedServer = defineMcpServer({ id: "guarded", url: guarded.url, connection: auth });
  const fragileServer = defineMcpServer({ id: "fragile", url: fragile.url });
  const down = defineMcpServer({ id: "down", url: "http://127.0.0.1:9/mcp" });
  const stopFragile = defineTool({
    name: "stop_fragile",
    description: "Stops the fragile server",
    run: async () => {
      await fragile.close();
      return "stopped";
    },
  });
  const agents = {
    reader: () => {
      useModel("script/reader");
      useMcpServer(docsServer);
      return "Answer from the docs.";
    },
    byId: () => {
      useModel("script/by-id");
      useMcpServer("docs");
      return "Answer from the docs.";
    },
    unknown: () => {
      useModel("script/by-id");
      useMcpServer("nope");
      return "x";
    },
    guarded: () => {
      useModel("script/guarded");
      useMcpServer(guardedServer);
      return "Use the guarded docs.";
    },
    flaky: () => {
      useModel("script/flaky");
      useMcpServer(down);
      useMcpServer(fragileServer);
      useTool(stopFragile);
      return "Use what is there.";
    },
    waiting: () => {
      useModel("script/waiting");
      useMcpServer(docsServer);
      return "Wait.";
    },
  };

  const secrets = new FileSecretStore({
    file: join(dir, ".opencomputer", "secrets.json"),
    keyFile: join(dir, ".opencomputer", "secret.key"),
  });
  await secrets.set("development", "GUARDED_TOKEN", SECRET);
  store = createSqliteStore({ path: join(dir, "data.db") });
  gateway = createEgressGateway({
    devMode: true,
    secrets,
    connections: () => [connectionDeclaration(auth)],
    events: (sessionId, event) => runtime.sessions.recordEgress(sessionId, event),
  });
  await gateway.listen();
  const log = (message: string, fields?: unknown) =>
    void logs.push(JSON.stringify({ message, fields }));
  runtime = createRuntime({
    store,
    agents: createStaticAgents({
      projectDir: dir,
      agents,
      resources: {
        byId: { mcpServers: [{ id: "docs", url: docs.url }] },
        unknown: { mcpServers: [] },
      },
    }),
    models: createModelResolver({ providers: { script: createScriptModel }, override: "" }),
    egress: gatewayEgressSource(gateway, async (id) => (await store.getSession(id))?.environment),
    mcp: { connector: createMcpConnector({ allowLoopbackHttp: true }) },
    log: { error: log, warn: log },
  });
  await runtime.start();
});

afterAll(async () => {
  await runtime?.close();
  await gateway?.close();
  await store?.close();
  await Promise.all([docs, guarded, fragile].map((s) => s?.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function run(agentId: string, text = "go") {
  const { session } = await runtime.sessions.create({ agentId });
  const { turnId } = await runtime.sessions.sendTurn(session.id, { text });
  const turn = await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
  const events = await store.readEvents(session.id, 0, 500);
  for (const event of events) expect(eventIssues(event), event.type).toEqual([]);
  return { sessionId: session.id, turn, events };
}

const of = (events: EventRecord[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe("MCP tools in a turn", () => {
  it("are offered as mcp__<server>__<tool>, run, fail with codes, and are listed once per turn", async () => {
    script("reader", [
      {
        toolCalls: [
          { name: "mcp__docs__search", input: { query: "vpn", limit: 1 } },
          { name: "mcp__docs__lookup", input: { id: "d7" } },
          { name: "mcp__docs__explode", input: {} },
          { name: "mcp__docs__search", input: { limit: 1 } },
        ],
      },
      { text: "Found it." },
    ]);
    const { turn, events } = await run("reader");
    expect(turn.status).toBe("completed");
    const [render] = of(events, "agent.rendered");
    expect(render?.enabledMcpServers).toEqual(["docs"]);
    expect(render?.enabledTools).toEqual(
      expect.arrayContaining(["mcp__docs__search", "mcp__docs__lookup", "mcp__docs__slow"]),
    );
    const completed = of(events, "tool.completed");
    expect(completed.map((d) => d.output)).toEqual([
      "vpn result 1",
      { id: "d7", title: "Document d7" },
    ]);
    const failed = of(events, "tool.failed");
    const exploded = failed.find((d) => d.tool === "mcp__docs__explode");
    expect(exploded).toMatchObject({ code: "mcp_tool_error" });
    expect(String(exploded?.message)).toContain("the index is corrupt");
    const invalid = failed.find((d) => d.tool === "mcp__docs__search");
    expect(String(invalid?.message)).toContain("Invalid input for mcp__docs__search");
    expect(docs.calls.search).toBe(1);
    expect(of(events, "agent.rendered")).toHaveLength(2);
  });

  it("a server attached by id comes from the deployment's declarations; an unknown id fails the turn", async () => {
    script("by-id", [
      { toolCalls: [{ name: "mcp__docs__lookup", input: { id: "a1" } }] },
      { text: "ok" },
    ]);
    const found = await run("byId");
    expect(of(found.events, "tool.completed")[0]?.output).toEqual({
      id: "a1",
      title: "Document a1",
    });
    const unknown = await run("unknown");
    expect(unknown.turn.status).toBe("failed");
    expect(of(unknown.events, "turn.failed")[0]).toMatchObject({ code: "agent_failed" });
    expect(String(of(unknown.events, "turn.failed")[0]?.message)).toContain(
      'the deployment declares no MCP server "nope"',
    );
  });

  it("reaches a server that needs a bearer secret through the egress gateway; the secret stays out", async () => {
    script("guarded", [
      { toolCalls: [{ name: "mcp__guarded__search", input: { query: "q" } }] },
      { text: "ok" },
    ]);
    const { turn, events } = await run("guarded");
    expect(turn.status).toBe("completed");
    expect(of(events, "tool.completed")[0]?.output).toBe("q result 1\nq result 2");
    expect(guarded.authorizations.length).toBeGreaterThan(0);
    expect(guarded.authorizations.every((a) => a === `Bearer ${SECRET}`)).toBe(true);
    const egress = of(events, "egress.response");
    expect(egress.length).toBeGreaterThan(0);
    expect(
      egress.every(
        (d) => (d.connectionId === "guarded-auth" && d.status === 200) || d.status === 202,
      ),
    ).toBe(true);
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(logs.join("\n")).not.toContain(SECRET);
    expect(gateway.liveTokens).toBe(0);
  });

  it("a server that is down leaves its tools out (mcp.unavailable); one that goes down fails the call, not the turn", async () => {
    script("flaky", [
      { toolCalls: [{ name: "mcp__fragile__search", input: { query: "a" } }] },
      { toolCalls: [{ name: "stop_fragile", input: {} }] },
      { toolCalls: [{ name: "mcp__fragile__search", input: { query: "b" } }] },
      { text: "Done anyway." },
    ]);
    const { turn, events } = await run("flaky");
    expect(turn.status).toBe("completed");
    const unavailable = of(events, "mcp.unavailable");
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0]).toMatchObject({ server: "down", code: "mcp_server_unavailable" });
    const renders = of(events, "agent.rendered");
    expect(renders[0]?.enabledTools).not.toContain("mcp__down__search");
    expect(of(events, "tool.completed").map((d) => d.tool)).toEqual([
      "mcp__fragile__search",
      "stop_fragile",
    ]);
    expect(of(events, "tool.failed")[0]).toMatchObject({
      tool: "mcp__fragile__search",
      code: "mcp_server_unavailable",
    });
  });

  it("an interrupt cancels a running MCP call; the server sees the cancellation", async () => {
    script("waiting", [{ toolCalls: [{ name: "mcp__docs__slow", input: {} }] }, { text: "never" }]);
    const { session } = await runtime.sessions.create({ agentId: "waiting" });
    const { turnId } = await runtime.sessions.sendTurn(session.id, { text: "wait" });
    await docs.slowStarted;
    // The progress the server sent before it started waiting is in the log before the interrupt.
    for (let i = 0; i < 200; i++) {
      const sofar = await store.readEvents(session.id, 0, 500);
      if (sofar.some((e) => e.type === "tool.progress")) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await runtime.sessions.interrupt(session.id);
    const turn = await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("cancelled");
    await docs.slowCancelled(1);
    const events = await store.readEvents(session.id, 0, 500);
    expect(of(events, "tool.progress")[0]).toMatchObject({
      tool: "mcp__docs__slow",
      metadata: { progress: 1, total: 2, message: "warming up" },
    });
    // The interrupt's settlement closes the call; the cancellation is not the call's outcome.
    const failed = of(events, "tool.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ tool: "mcp__docs__slow", settledBy: "interrupted" });
  });
});
