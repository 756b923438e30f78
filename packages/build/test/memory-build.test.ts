// Memory declarations in the build: `defineMemory` resources exported by an agent's memory.ts
// (and the project's opencomputer/memory/*.ts) are recorded in its deployment, where the runtime
// reads which resources sessions may bind; a definition the SDK refuses is a build and doctor
// error at its file and line.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProject, checkProject, createDeploymentAgents } from "../src/index.ts";
import { at, copyFixture } from "./helpers.ts";

const project = copyFixture("memory");
afterAll(() => project.remove());

describe("memory declarations", { timeout: 120_000 }, () => {
  it("doctor and build report a refused definition at its file and line", async () => {
    const checked = await checkProject(project.dir);
    const mine = checked.errors.filter((e) => e.file.includes("broken"));
    const where = at(project.dir, "opencomputer/agents/broken/memory.ts", "documentMemory(");
    expect(mine.map(({ code, file, line }) => ({ code, file, line }))).toEqual([
      { code: "memory_invalid", file: where.file, line: where.line },
    ]);
    expect(mine[0]!.message).toMatch(/maxBytes.*16384/);
    const built = await buildProject(project.dir);
    expect(built.deployments).toEqual([]);
    expect(built.errors.map((e) => e.code)).toContain("memory_invalid");
  });

  it("records each agent's declarations in its deployment, for the runtime's resolver", async () => {
    rmSync(join(project.dir, "opencomputer", "agents", "broken"), { recursive: true });
    const built = await buildProject(project.dir);
    expect(built.errors).toEqual([]);
    const deployment = built.deployments.find((d) => d.agentId === "workshop")!;
    expect(deployment.memory).toEqual([
      {
        id: "notes",
        description: "Workshop requirements and decisions.",
        provider: { kind: "document", maxBytes: 8192 },
      },
      {
        id: "team",
        description: "What the team agreed.",
        provider: { kind: "document", maxBytes: 8192 },
      },
    ]);
    // The connection given to httpMemory is recorded with the agent's connections, so the
    // egress gateway lets the provider's requests through.
    const keeper = built.deployments.find((d) => d.agentId === "keeper")!;
    expect(keeper.memory?.map((m) => [m.id, m.provider.kind])).toEqual([
      ["knowledge", "http"],
      ["team", "document"],
    ]);
    expect(keeper.connections).toEqual([
      {
        id: "memory-service",
        origin: "https://memory.example.com",
        headers: { authorization: { secret: "MEMORY_TOKEN", prefix: "Bearer " } },
        methods: ["POST"],
        pathPrefix: "/oc-memory",
      },
    ]);
    const agents = createDeploymentAgents(project.dir);
    const { deploymentId } = await agents.describe("workshop@development");
    expect(await agents.memory!("workshop", deploymentId)).toEqual(deployment.memory);
  });
});
