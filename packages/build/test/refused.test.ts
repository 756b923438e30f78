// Each refused form of the seed's "Schema declarations", one agent directory per rule in the
// `refused` fixture project: the error's code, file, line and column, and that its message
// names the form found. One check of the whole project also proves a build reports every
// error, not only the first.

import { beforeAll, describe, expect, it } from "vitest";
import { type CheckResult, checkProject } from "../src/index.ts";
import { at, expectOnlyError, fixture } from "./helpers.ts";

const dir = fixture("refused");
let result: CheckResult;

beforeAll(async () => {
  result = await checkProject(dir);
});

const TOOL = "tools/check-url.ts";

// [agent, code, file in the agent directory, needle, within, words the message must contain]
// biome-ignore format: one case per line reads as a table
const cases: Array<[string, string, string, string, string | undefined, string]> = [
  ["function-call", "output_function_call", TOOL, "makeSchema()", "output: makeSchema()", "a function call `makeSchema()`"],
  ["const-function-call", "output_function_call", TOOL, "JSON.parse(", undefined, "a function call `JSON.parse("],
  ["let", "output_let_binding", TOOL, "checkResult", "let checkResult", "a `let` binding"],
  ["var", "output_var_binding", TOOL, "checkResult", "var checkResult", "a `var` binding"],
  ["namespace-member", "output_namespace_member", TOOL, "schemas.report", undefined, "a namespace member `schemas.report`"],
  ["package-import", "output_package_import", TOOL, "MAX_JSON_DEPTH", undefined, 'imported from the package "@opencomputer/agent"'],
  ["reexport", "output_reexport", "schemas/index.ts", "checkResult", undefined, "re-export"],
  ["export-star", "output_reexport", "schemas/index.ts", "export *", undefined, "may come through the re-export"],
  ["default-import", "output_not_static", TOOL, "checkResult", undefined, "a default import"],
  ["outside-agent", "output_import_outside_agent", TOOL, "checkResult", undefined, "outside the agent directory"],
  ["output-spread", "output_spread", TOOL, "...base", undefined, "a spread `...base`"],
  ["output-computed", "computed_property", TOOL, "[key]", undefined, "a computed property name `[key]`"],
  ["output-identifier", "output_not_static", TOOL, "urlSchema", "url: urlSchema", "an identifier `urlSchema` where a literal is needed"],
  ["output-template", "output_not_static", TOOL, "`Status of", undefined, "a template literal with substitutions"],
  ["tool-spread", "spread_in_tool", TOOL, "...common", undefined, "a spread `...common`"],
  ["tool-computed", "computed_property", TOOL, "[nameKey]", undefined, "a computed property name `[nameKey]`"],
  ["name-template", "name_not_literal", TOOL, "`check_", undefined, "a template literal with substitutions"],
  ["name-identifier", "name_not_literal", TOOL, "TOOL_NAME", "name: TOOL_NAME", "an identifier `TOOL_NAME`"],
  ["result-identifier", "result_not_literal", TOOL, "IS_RESULT", "result: IS_RESULT", "an identifier `IS_RESULT`"],
  ["result-expression", "result_not_literal", TOOL, "!0", undefined, "a computed expression `!0`"],
  ["output-getter", "property_not_ordinary", TOOL, "get output", undefined, '"output" is written as a getter'],
  ["result-getter", "property_not_ordinary", TOOL, "get result", undefined, '"result" is written as a getter'],
  ["not-exported", "tool_not_exported", "agent.ts", "defineTool({", undefined, "exported top-level const"],
  ["not-literal", "tool_not_literal", TOOL, "definition", "defineTool(definition)", "an identifier `definition`"],
];

describe("refused forms", () => {
  it.each(cases)("%s: %s", (agent, code, file, needle, within, words) => {
    const prefix = `opencomputer/agents/${agent}/`;
    const error = expectOnlyError(result.errors, prefix, {
      code,
      ...at(dir, prefix + file, needle, within),
    });
    expect(error.message).toContain(words);
  });

  it("reports every refused form of the project in one check, and nothing else", () => {
    const agents = new Set(result.errors.map((e) => e.file.split("/")[2]));
    expect([...agents].sort()).toEqual(cases.map(([agent]) => agent).sort());
    expect(result.errors).toHaveLength(cases.length);
  });
});
