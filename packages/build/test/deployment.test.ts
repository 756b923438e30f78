// The seed's check_url agent built into a deployment: what it records, that a rebuild of the
// same source is the same deployment (and writes nothing), that a change makes a new one beside
// the old, and that the runtime's resolver loads and renders it.

import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isTool, renderAgent } from "@opencomputer/agent/internal";
import { jsonDigest } from "@opencomputer/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BuildResult,
  buildProject,
  createDeploymentAgents,
  deploymentsDir,
  readAliases,
} from "../src/index.ts";
import { copyFixture } from "./helpers.ts";

const CHECK_RESULT = {
  type: "object",
  properties: { url: { type: "string" }, status: { type: "integer" } },
  required: ["url", "status"],
  additionalProperties: false,
};

const project = copyFixture("check-url");
const out = deploymentsDir(project.dir);
let first: BuildResult;

beforeAll(async () => {
  first = await buildProject(project.dir, { now: () => new Date("2025-01-01T00:00:00Z") });
});
afterAll(() => project.remove());

describe("building the seed's check_url agent", () => {
  it("records the tools, the result tool's schema from source and its digest", () => {
    expect(first.errors).toEqual([]);
    const [deployment] = first.deployments;
    expect(deployment).toEqual({
      id: expect.stringMatching(/^dep_[0-9a-f]{20}$/),
      agentId: "checker",
      createdAt: "2025-01-01T00:00:00.000Z",
      tools: [
        {
          name: "check_url",
          description: "Check an HTTPS URL and report its HTTP status",
          input: {
            type: "object",
            properties: { url: { type: "string" } },
            required: ["url"],
            additionalProperties: false,
          },
          output: CHECK_RESULT,
          result: true,
          kind: "run",
        },
        {
          // Selected only under a condition, and its input schema built at load.
          name: "lookup_order",
          description: "Look up an order by ID",
          input: {
            type: "object",
            properties: { orderId: { type: "string" } },
            required: ["orderId"],
          },
          result: false,
          kind: "run",
        },
      ],
      resultTool: { name: "check_url", schemaDigest: jsonDigest(CHECK_RESULT) },
      bundle: { file: "bundle.mjs", digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
    });
    expect(first.created).toEqual(["checker"]);
  });

  it("writes deployment.json, bundle.mjs and the agent's current pointer", () => {
    const id = first.deployments[0]!.id;
    const manifest = JSON.parse(readFileSync(join(out, id, "deployment.json"), "utf8"));
    expect(manifest).toEqual(first.deployments[0]);
    const bundle = readFileSync(join(out, id, "bundle.mjs"), "utf8");
    // The SDK stays external so the runtime's copy is used.
    expect(bundle).toMatch(/from "@opencomputer\/agent"/);
    expect(bundle).not.toContain("function defineTool");
    expect(readAliases(out, "checker").development).toBe(id);
  });

  it("building unchanged source gives the same deployment and rewrites nothing", async () => {
    const id = first.deployments[0]!.id;
    const files = ["deployment.json", "bundle.mjs"].map((f) => join(out, id, f));
    const before = files.map((f) => statSync(f).mtimeMs);
    const again = await buildProject(project.dir, { now: () => new Date("2030-01-01T00:00:00Z") });
    expect(again.errors).toEqual([]);
    expect(again.deployments).toEqual(first.deployments);
    expect(again.created).toEqual([]);
    expect(files.map((f) => statSync(f).mtimeMs)).toEqual(before);
  });

  it("the resolver pins the current deployment and loads it", async () => {
    const agents = createDeploymentAgents(project.dir);
    const id = first.deployments[0]!.id;
    expect(await agents.describe("checker@development")).toEqual({
      agentId: "checker",
      deploymentId: id,
    });
    expect(await agents.describe("checker")).toEqual({ agentId: "checker", deploymentId: id });
    const loaded = await agents.load("checker", id);
    expect(loaded).toMatchObject({ agentId: "checker", deploymentId: id, projectDir: project.dir });
    expect(await agents.load("checker", id)).toBe(loaded);
    const rendered = renderAgent(loaded.render, { input: { source: "user", text: "an order" } });
    expect(rendered.tools.map((t) => t.name)).toEqual(["check_url", "lookup_order"]);
    expect(rendered.tools.every((t) => isTool(t))).toBe(true);
  });

  it("the resolver refuses unknown agents, with the command to run", async () => {
    const agents = createDeploymentAgents(project.dir);
    await expect(agents.describe("nobody")).rejects.toMatchObject({
      code: "agent_not_found",
      message: expect.stringContaining("opencomputer build"),
    });
  });

  it("a changed source gives a new deployment and leaves the old one in place", async () => {
    const oldId = first.deployments[0]!.id;
    const tool = join(project.dir, "opencomputer/agents/checker/tools/lookup-order.ts");
    writeFileSync(tool, readFileSync(tool, "utf8").replace("by ID", "by its ID"));
    const changed = await buildProject(project.dir);
    expect(changed.errors).toEqual([]);
    const newId = changed.deployments[0]!.id;
    expect(newId).not.toBe(oldId);
    expect(existsSync(join(out, oldId, "bundle.mjs"))).toBe(true);
    expect(readAliases(out, "checker").development).toBe(newId);
    // A session pinned to the old deployment still loads it.
    const agents = createDeploymentAgents(project.dir);
    await expect(agents.load("checker", oldId)).resolves.toMatchObject({ deploymentId: oldId });
    expect(await agents.describe("checker@development")).toEqual({
      agentId: "checker",
      deploymentId: newId,
    });
    // A build moves development only: production (and a bare id) still name the first build.
    expect(readAliases(out, "checker").production).toBe(oldId);
    expect(await agents.describe("checker")).toEqual({ agentId: "checker", deploymentId: oldId });
  });

  it("refuses a deployment whose files changed after the build", async () => {
    const id = readAliases(out, "checker").development!;
    const manifest = join(out, id, "deployment.json");
    const text = readFileSync(manifest, "utf8");
    writeFileSync(manifest, text.replace("Look up an order by its ID", "Edited"));
    try {
      await expect(createDeploymentAgents(project.dir).load("checker", id)).rejects.toMatchObject({
        code: "deployment_invalid",
      });
    } finally {
      writeFileSync(manifest, text);
    }
  });
});
