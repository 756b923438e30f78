// The docs' samples for MCP servers and skills (docs/agent-sdk.md, docs/mcp.md): the fixture
// project `capabilities` is built, then run on the scripted model. The handbook agent reaches a
// real MCP server (the SDK's, in this process) that wants a bearer secret, through the egress
// gateway; the writer agent loads its packaged skill and one of its files.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createEgressGateway,
  envLocalSecrets,
  gatewayEgressSource,
} from "@opencomputer/connections";
import { createMcpConnector } from "@opencomputer/mcp";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { eventIssues } from "@opencomputer/protocol";
import { createRuntime, type EventRecord } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { startTestMcpServer, type TestMcpServer } from "@opencomputer/testkit/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProject } from "../src/build.ts";
import { readDeployment } from "../src/deployment.ts";
import { createDeploymentAgents } from "../src/deployment-agents.ts";
import { deploymentsDir } from "../src/project.ts";
import { copyFixture, fixture } from "./helpers.ts";

const TOKEN = "handbook_token_91e2_never_log_me";
let project: ReturnType<typeof copyFixture>;
let server: TestMcpServer;
let store: ReturnType<typeof createSqliteStore>;
let gateway: ReturnType<typeof createEgressGateway>;
let runtime: ReturnType<typeof createRuntime>;
let build: Awaited<ReturnType<typeof buildProject>>;
const prompts: string[] = [];

beforeAll(async () => {
  project = copyFixture("capabilities");
  server = await startTestMcpServer({ bearer: TOKEN });
  // The sample's server address, replaced by the test server's.
  const origin = new URL(server.url).origin;
  for (const file of ["agent.ts", "connections/handbook-auth.ts"]) {
    const path = join(project.dir, "opencomputer/agents/handbook", file);
    writeFileSync(path, readFileSync(path, "utf8").replaceAll("https://mcp.example.com", origin));
  }
  writeFileSync(join(project.dir, "opencomputer/.env.local"), `HANDBOOK_TOKEN=${TOKEN}\n`);
  build = await buildProject(project.dir);

  const dir = deploymentsDir(project.dir);
  store = createSqliteStore({ path: join(project.dir, "data.db") });
  gateway = createEgressGateway({
    devMode: true,
    secrets: envLocalSecrets(project.dir),
    connections: ({ deploymentId }) =>
      (deploymentId && readDeployment(dir, deploymentId)?.connections) || [],
    events: (sessionId, event) => runtime.sessions.recordEgress(sessionId, event),
  });
  await gateway.listen();
  const recording = (name: string, context: Parameters<typeof createScriptModel>[1]) =>
    new Proxy(createScriptModel(name, context), {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key !== "doGenerate" && key !== "doStream") return value;
        return (options: { prompt: unknown }) => {
          prompts.push(JSON.stringify(options.prompt));
          return (value as (o: unknown) => unknown).call(target, options);
        };
      },
    }) as ReturnType<typeof createScriptModel>;
  runtime = createRuntime({
    store,
    agents: createDeploymentAgents(project.dir),
    models: createModelResolver({ providers: { script: recording }, override: "" }),
    egress: gatewayEgressSource(gateway, async (id) => (await store.getSession(id))?.environment),
    mcp: { connector: createMcpConnector({ allowLoopbackHttp: true }) },
  });
  await runtime.start();
});

afterAll(async () => {
  await runtime?.close();
  await gateway?.close();
  await store?.close();
  await server?.close();
  project?.remove();
});

async function run(agentId: string, text: string) {
  const { session } = await runtime.sessions.create({ agentId, environment: "development" });
  const { turnId } = await runtime.sessions.sendTurn(session.id, { text });
  const turn = await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
  const events = await store.readEvents(session.id, 0, 500);
  for (const event of events) expect(eventIssues(event), event.type).toEqual([]);
  return { turn, events };
}

const of = (events: EventRecord[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

describe("the MCP and skills samples", () => {
  it("are the files docs/mcp.md and docs/agent-sdk.md show", () => {
    const docs = (name: string) =>
      readFileSync(new URL(`../../../docs/${name}`, import.meta.url), "utf8");
    const shown: Record<string, string[]> = {
      "mcp.md": ["agents/handbook/agent.ts", "agents/handbook/connections/handbook-auth.ts"],
      "agent-sdk.md": ["agents/writer/agent.ts", "agents/writer/skills/release-notes/SKILL.md"],
    };
    for (const [page, files] of Object.entries(shown)) {
      for (const file of files) {
        const text = readFileSync(join(fixture("capabilities"), "opencomputer", file), "utf8");
        expect(docs(page), `${page} shows ${file}`).toContain(text.trimEnd());
      }
    }
  });

  it("build: the manifest records the server, its connection and the packaged skill", () => {
    expect(build.errors).toEqual([]);
    const handbook = build.deployments.find((d) => d.agentId === "handbook")!;
    expect(handbook.mcpServers).toEqual([
      {
        id: "handbook",
        url: `${new URL(server.url).origin}/handbook`,
        connection: "handbook-auth",
      },
    ]);
    expect(handbook.connections?.map((c) => c.id)).toEqual(["handbook-auth"]);
    const writer = build.deployments.find((d) => d.agentId === "writer")!;
    expect(writer.skills?.[0]).toMatchObject({
      name: "release-notes",
      description: expect.stringContaining("Write release notes"),
    });
    expect(writer.skills?.[0]?.files.map((f) => f.path)).toEqual([
      "SKILL.md",
      "STYLE.md",
      "examples/minor-release.md",
    ]);
    const packaged = join(deploymentsDir(project.dir), writer.id, "skills/release-notes/STYLE.md");
    expect(readFileSync(packaged, "utf8")).toContain("Present tense");
  });

  it("handbook: a policy question attaches the server; its tool runs with the bearer secret", async () => {
    const { turn, events } = await run("handbook@development", "What is the travel policy?");
    expect(turn.status).toBe("completed");
    expect(of(events, "agent.rendered")[0]?.enabledMcpServers).toEqual(["handbook"]);
    expect(of(events, "tool.completed")[0]).toMatchObject({
      tool: "mcp__handbook__search",
      output: "travel policy result 1",
    });
    expect(server.authorizations.length).toBeGreaterThan(0);
    expect(server.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
    expect(of(events, "egress.response").every((d) => d.connectionId === "handbook-auth")).toBe(
      true,
    );
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(prompts.join("\n")).not.toContain(TOKEN);
  });

  it("writer: the model sees the skill, loads it and a file; each load is an event", async () => {
    const { turn, events } = await run("writer@development", "Announce 2.4.0");
    expect(turn.status).toBe("completed");
    const [render] = of(events, "agent.rendered");
    expect(render?.skills).toEqual(["release-notes"]);
    expect(render?.enabledTools).toContain("load_skill");
    expect(prompts.some((p) => p.includes("- release-notes: Write release notes"))).toBe(true);
    const [body, style] = of(events, "tool.completed");
    expect(body?.output).toMatchObject({
      skill: "release-notes",
      files: ["STYLE.md", "examples/minor-release.md"],
    });
    const instructions = String(
      (body?.output as { instructions?: string } | undefined)?.instructions,
    );
    expect(instructions.startsWith("# Release notes")).toBe(true);
    expect(style?.output).toMatchObject({
      file: "STYLE.md",
      content: expect.stringContaining("Present tense"),
    });
    expect(of(events, "skill.loaded")).toEqual([
      expect.objectContaining({ skill: "release-notes", bytes: expect.any(Number) }),
      expect.objectContaining({ skill: "release-notes", file: "STYLE.md" }),
    ]);
    expect(of(events, "skill.loaded")[0]).not.toHaveProperty("file");
  });
});
