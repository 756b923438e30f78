// Errors whose fixtures cannot live in the repository as source files (they would fail the
// repository's own type check, lint or parse): written to a temporary project instead.

import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CheckResult, checkProject } from "../src/index.ts";
import { at, copyFixture, expectOnlyError } from "./helpers.ts";

const project = copyFixture("load-throws");
const dir = project.dir;
let result: CheckResult;

function write(file: string, text: string): void {
  mkdirSync(dirname(join(dir, file)), { recursive: true });
  writeFileSync(join(dir, file), text);
}

const AGENT = (imports: string, uses: string) => `import { useTool } from "@opencomputer/agent";
${imports}

export default function Agent() {
  ${uses}
  return "Work.";
}
`;

beforeAll(async () => {
  // Only the generated agents: drop the fixture's own.
  write("opencomputer/agents/checker/tools/check-url.ts", "");
  write("opencomputer/agents/checker/agent.ts", AGENT("", ""));
  write(
    "opencomputer/agents/syntax/agent.ts",
    AGENT('import { broken } from "./tools/broken.ts";', "useTool(broken);"),
  );
  write("opencomputer/agents/syntax/tools/broken.ts", "export const broken = ;\n");
  write(
    "opencomputer/agents/missing/agent.ts",
    AGENT('import { gone } from "./tools/gone.ts";', "useTool(gone);"),
  );
  write(
    "opencomputer/agents/factory/agent.ts",
    AGENT('import { made } from "./tools/made.ts";', "useTool(made);"),
  );
  write(
    "opencomputer/agents/factory/tools/made.ts",
    'import { make } from "../../../lib/make.ts";\n\nexport const made = make("made_tool");\n',
  );
  write(
    "opencomputer/lib/make.ts",
    `import { defineTool } from "@opencomputer/agent";

export function make(name: string) {
  return defineTool({ name, description: "Made by a factory", run: () => 1 });
}
`,
  );
  write(
    "opencomputer/agents/circular/agent.ts",
    AGENT('import { loop } from "./tools/loop.ts";', "useTool(loop);"),
  );
  write(
    "opencomputer/agents/circular/tools/loop.ts",
    `import { defineTool } from "@opencomputer/agent";

const a = b;
const b = a;

export const loop = defineTool({ name: "loop", description: "d", output: a, result: true, run: () => 1 });
`,
  );
  write("opencomputer/agents/no-default/agent.ts", 'export const instructions = "Work.";\n');
  result = await checkProject(dir);
});
afterAll(() => project.remove());

describe("errors found in generated projects", () => {
  it("a module that does not parse", () => {
    const file = "opencomputer/agents/syntax/tools/broken.ts";
    expectOnlyError(result.errors, "opencomputer/agents/syntax/", {
      code: "syntax_error",
      ...at(dir, file, ";"),
    });
  });

  it("an import of a file that does not exist", () => {
    const file = "opencomputer/agents/missing/agent.ts";
    expectOnlyError(result.errors, "opencomputer/agents/missing/", {
      code: "import_not_found",
      ...at(dir, file, '"./tools/gone.ts"'),
    });
  });

  it("a tool made by a factory: the call cannot be read, and the exported tool was never seen", () => {
    const errors = result.errors.filter(
      (e) => e.file.startsWith("opencomputer/lib/") || e.file.includes("/factory/"),
    );
    const made = "opencomputer/agents/factory/tools/made.ts";
    const make = "opencomputer/lib/make.ts";
    expect(errors.map(({ code, file, line, column }) => ({ code, file, line, column }))).toEqual([
      { code: "tool_not_static", ...at(dir, made, "made =") },
      { code: "tool_not_exported", ...at(dir, make, "defineTool({") },
      { code: "name_not_literal", ...at(dir, make, "name,") },
    ]);
  });

  it("const references that loop", () => {
    const file = "opencomputer/agents/circular/tools/loop.ts";
    expectOnlyError(result.errors, "opencomputer/agents/circular/", {
      code: "output_circular",
      ...at(dir, file, "a;", "const b = a;"),
    });
  });

  it("an agent without a default export", () => {
    expectOnlyError(result.errors, "opencomputer/agents/no-default/", {
      code: "agent_no_default_export",
      file: "opencomputer/agents/no-default/agent.ts",
      line: 1,
      column: 1,
    });
  });
});
