// opencomputer/project.ts as the platform's docs write it: read from source without running it,
// checked against the agent directories (both ways), and its `shell: false` recorded in every
// deployment.

import { afterEach, describe, expect, it } from "vitest";
import { buildProject, checkProject, readProjectDeclaration } from "../src/index.ts";
import { writeProject } from "./helpers.ts";

const removals: Array<() => void> = [];
afterEach(() => {
  for (const remove of removals.splice(0)) remove();
});

const AGENT = `import { useModel } from "@opencomputer/agent";
export default function Agent() {
  useModel("anthropic/claude-sonnet-4.6");
  return "Research the request.";
}
`;

function project(files: Record<string, string>): string {
  const { dir, remove } = writeProject(files);
  removals.push(remove);
  return dir;
}

describe("readProjectDeclaration", () => {
  it("reads the docs' form: name and agents, with each id's position", () => {
    const dir = project({
      "opencomputer/project.ts": `export default {
  name: "Customer workspace",
  agents: ["hello-world", "researcher"],
};
`,
    });
    const { declaration, errors } = readProjectDeclaration(dir);
    expect(errors).toEqual([]);
    expect(declaration).toEqual({
      file: "opencomputer/project.ts",
      name: "Customer workspace",
      agents: [
        { id: "hello-world", line: 3, column: 12 },
        { id: "researcher", line: 3, column: 27 },
      ],
      shell: true,
      agentsAt: { line: 3, column: 3 },
    });
  });

  it("reads a const export with satisfies/as const, and shell: false", () => {
    const dir = project({
      "opencomputer/project.ts": `const project = { name: "p", agents: ["a"] as const, shell: false } as const;
export default project;
`,
    });
    const { declaration, errors } = readProjectDeclaration(dir);
    expect(errors).toEqual([]);
    expect(declaration).toMatchObject({ name: "p", shell: false, agents: [{ id: "a" }] });
  });

  it("is optional: no file, no declaration and no error", () => {
    expect(readProjectDeclaration(project({ "package.json": "{}" }))).toEqual({ errors: [] });
  });

  it("refuses what it cannot read without running code, naming the form and position", () => {
    const dir = project({
      "opencomputer/project.ts": `const ids = ["a"];
export default { name: makeName(), agents: ids, shell: "no", team: "x" };
`,
    });
    const { errors } = readProjectDeclaration(dir);
    expect(errors.map(({ code, line, column }) => ({ code, line, column }))).toEqual([
      { code: "project_invalid", line: 2, column: 24 },
      { code: "project_invalid", line: 2, column: 44 },
      { code: "project_invalid", line: 2, column: 56 },
      { code: "project_key_unknown", line: 2, column: 62 },
    ]);
    expect(errors[0]!.message).toContain("a function call `makeName()`");
    expect(errors[1]!.message).toContain("an identifier `ids`");
    expect(errors[3]!.message).toContain("name, agents, shell");
  });

  it("refuses a default export that is not an object, duplicates and bad ids", () => {
    const fn = project({ "opencomputer/project.ts": "export default makeProject();\n" });
    expect(readProjectDeclaration(fn).errors[0]).toMatchObject({
      code: "project_invalid",
      line: 1,
    });
    const dup = project({
      "opencomputer/project.ts": `export default { agents: ["a", "a", "no spaces"] };\n`,
    });
    expect(readProjectDeclaration(dup).errors.map((e) => e.code)).toEqual([
      "project_agent_duplicate",
      "agent_id_invalid",
    ]);
  });
});

describe("doctor and build with project.ts", () => {
  it("report a listed agent that does not exist and an agent directory not listed, in project.ts", async () => {
    const dir = project({
      "opencomputer/project.ts": `export default {
  name: "Workspace",
  agents: ["hello-world", "ghost"],
};
`,
      "opencomputer/agents/hello-world/agent.ts": AGENT,
      "opencomputer/agents/researcher/agent.ts": AGENT,
    });
    const result = await checkProject(dir);
    const mine = result.errors.map(({ code, file, line, column }) => ({
      code,
      file,
      line,
      column,
    }));
    expect(mine).toEqual([
      { code: "project_agent_unlisted", file: "opencomputer/project.ts", line: 3, column: 3 },
      { code: "project_agent_missing", file: "opencomputer/project.ts", line: 3, column: 27 },
    ]);
    expect(result.errors[0]!.message).toContain(
      'opencomputer/agents/researcher/agent.ts defines the agent "researcher"',
    );
    expect(result.errors[1]!.message).toContain('lists the agent "ghost"');
    const built = await buildProject(dir);
    expect(built.deployments).toEqual([]);
    expect(built.errors.map((e) => e.code)).toEqual([
      "project_agent_unlisted",
      "project_agent_missing",
    ]);
  });

  it("records shell: false in each deployment (and nothing when the project keeps the default)", async () => {
    const files = {
      "opencomputer/agents/researcher/agent.ts": AGENT,
      "opencomputer/project.ts": `export default { name: "W", agents: ["researcher"], shell: false };\n`,
    };
    const off = await buildProject(project(files));
    expect(off.errors).toEqual([]);
    expect(off.deployments[0]!.defaultTools).toEqual([]);
    const on = await buildProject(
      project({
        ...files,
        "opencomputer/project.ts": `export default { name: "W", agents: ["researcher"] };\n`,
      }),
    );
    expect(on.errors).toEqual([]);
    expect(on.deployments[0]!.defaultTools).toBeUndefined();
    // The choice is part of what a deployment is: the same code, another id.
    expect(on.deployments[0]!.id).not.toBe(off.deployments[0]!.id);
  });
});
