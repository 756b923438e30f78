// Loading the tool modules in a child process: a module that throws, hangs or cannot finish at
// load is a clear build error; defineTool's own refusals pass through. And the proof that the
// result tool's output is never obtained by running code: a module that changes its schema
// while loading gets the literal recorded, and then fails the load-time check.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { afterAll, describe, expect, it } from "vitest";
import { buildProject, checkProject, createDeploymentAgents } from "../src/index.ts";
import { at, copyFixture, expectOnlyError, fixture } from "./helpers.ts";

const TOOL = "opencomputer/agents/checker/tools/check-url.ts";

describe("loading tool modules", () => {
  it("a module that throws at load names the module, the message and the line", async () => {
    const dir = fixture("load-throws");
    const { errors } = await checkProject(dir);
    const error = expectOnlyError(errors, "", {
      code: "tool_module_load_failed",
      ...at(dir, TOOL, 'new Error("database'),
    });
    expect(error.message).toBe(`Loading ${TOOL} threw Error: database unavailable at load`);
  });

  it("a module that hangs at load is stopped at the time limit", async () => {
    const { errors, timings } = await checkProject(fixture("load-hangs"), { loadTimeoutMs: 1500 });
    const error = expectOnlyError(errors, "", {
      code: "tool_module_load_timeout",
      file: TOOL,
      line: 1,
      column: 1,
    });
    expect(error.message).toContain(`Loading ${TOOL} did not finish within 1500 ms`);
    expect(timings.loadMs).toBeLessThan(20_000);
  });

  it("a module whose top-level await can never settle is reported, not waited for", async () => {
    const { errors } = await checkProject(fixture("load-stalls"));
    const error = expectOnlyError(errors, "", {
      code: "tool_module_load_failed",
      file: TOOL,
      line: 1,
      column: 1,
    });
    expect(error.message).toContain("never finished");
  });

  it("defineTool's refusal at load keeps its code and points at the call", async () => {
    const dir = fixture("load-bad-input");
    const { errors } = await checkProject(dir);
    const error = expectOnlyError(errors, "", {
      code: "tool_input_not_object",
      ...at(dir, TOOL, "defineTool({"),
    });
    expect(error.message).toContain('defineTool("check_url")');
  });
});

describe("output is read from source, never by running code", () => {
  const project = copyFixture("mutating-schema");
  afterAll(() => project.remove());

  it("records the static literal, and the load-time check then refuses the deployment", async () => {
    const built = await buildProject(project.dir);
    expect(built.errors).toEqual([]);
    const [deployment] = built.deployments;
    const recorded = {
      type: "object",
      properties: { url: { type: "string" }, status: { type: "integer" } },
      required: ["url", "status"],
    };
    expect(deployment?.tools[0]?.output).toEqual(recorded);
    const file = join(project.dir, ".opencomputer/deployments", deployment!.id, "deployment.json");
    expect(JSON.parse(readFileSync(file, "utf8")).tools[0].output).toEqual(recorded);

    const agents = createDeploymentAgents(project.dir);
    const { deploymentId } = await agents.describe("checker");
    const failure = await agents.load("checker", deploymentId).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenComputerError);
    expect(failure).toMatchObject({
      code: "deployment_invalid",
      details: { tool: "check_url" },
      message: expect.stringContaining('tool "check_url"'),
    });
  });
});
