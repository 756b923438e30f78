// What agent code names by id is checked before anything runs: `useSubagent("id")` against the
// project's agents (doctor and build), `connection("id")` against the connections the agent may
// use (build, which loads them). Each error names the file and the position of the id.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProject } from "../src/build.ts";
import { checkProject } from "../src/check.ts";
import { at, copyFixture } from "./helpers.ts";

const project = copyFixture("subagents");
afterAll(() => project.remove());

const PLANNER = "opencomputer/agents/campaign-planner/agent.ts";
const RESEARCHER = "opencomputer/agents/researcher/agent.ts";
const brief = (e: { code: string; file: string; line: number; column: number }) => ({
  code: e.code,
  file: e.file,
  line: e.line,
  column: e.column,
});

describe("references by id", { timeout: 120_000 }, () => {
  it("doctor refuses an unknown subagent and an agent delegating to itself, with positions", async () => {
    const { errors } = await checkProject(project.dir);
    expect(errors.map(brief)).toEqual([
      { code: "subagent_unknown", ...at(project.dir, PLANNER, '"lawyer"') },
      { code: "subagent_self", ...at(project.dir, RESEARCHER, '"researcher"') },
    ]);
    expect(errors[0]!.message).toContain('the project has no agent "lawyer"');
    expect(errors[0]!.message).toContain("its agents: researcher");
  });

  it("build also refuses a connection id no connection declares", async () => {
    const { errors, deployments } = await buildProject(project.dir);
    expect(deployments).toEqual([]);
    expect(errors.map(brief)).toContainEqual({
      code: "connection_unknown",
      ...at(project.dir, PLANNER, '"gitlab"'),
    });
    expect(errors.find((e) => e.code === "connection_unknown")!.message).toContain(
      "declared: github",
    );
  });

  it("builds once every id names something the project declares", async () => {
    const file = join(project.dir, PLANNER);
    writeFileSync(
      file,
      [
        'import { connection, useConnection, useModel, useSubagent } from "@opencomputer/agent";',
        "",
        'const github = connection("github");',
        "",
        "export default function Agent() {",
        '  useModel("anthropic/claude-sonnet-4.6");',
        "  useConnection(github);",
        '  useSubagent("researcher");',
        '  return "Plan the campaign.";',
        "}",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(project.dir, RESEARCHER),
      'import { useModel } from "@opencomputer/agent";\nexport default function Agent() {\n  useModel("anthropic/claude-sonnet-4.6");\n  return "Research.";\n}\n',
    );
    const { errors, deployments } = await buildProject(project.dir);
    expect(errors).toEqual([]);
    expect(deployments.map((d) => d.agentId).sort()).toEqual(["campaign-planner", "researcher"]);
  });
});
