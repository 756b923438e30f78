// The accepted forms of a result tool's output schema, one agent per form in the `accepted`
// fixture project: each is recorded exactly as written.

import { jsonDigest } from "@opencomputer/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { type CheckResult, checkProject } from "../src/index.ts";
import { fixture } from "./helpers.ts";

let result: CheckResult;

beforeAll(async () => {
  result = await checkProject(fixture("accepted"));
});

const URL_STATUS = {
  type: "object",
  properties: { url: { type: "string" }, status: { type: "integer" } },
  required: ["url", "status"],
};

function agent(agentId: string) {
  const found = result.agents.find((a) => a.agentId === agentId);
  if (!found) throw new Error(`no agent ${agentId}`);
  return found;
}

function resultOutput(agentId: string) {
  const report = agent(agentId);
  const tool = report.tools.find((t) => t.result);
  expect(report.resultTool).toEqual({
    name: tool?.name,
    schemaDigest: jsonDigest(tool?.output),
  });
  return tool?.output;
}

describe("accepted forms", () => {
  it("finds no errors", () => {
    expect(result.errors).toEqual([]);
  });

  it("an object literal in the defineTool() call (negative numbers, quoted keys, plain templates)", () => {
    expect(resultOutput("inline")).toEqual({
      type: "object",
      properties: {
        url: { type: "string", description: "The final URL" },
        status: { type: "integer", minimum: -1, maximum: 599 },
        "content-type": { type: ["string", "null"] },
      },
      required: ["url", "status"],
      additionalProperties: false,
    });
  });

  it("a const object literal in the same module (satisfies allowed)", () => {
    expect(resultOutput("const")).toEqual(URL_STATUS);
  });

  it("a const named like the property, given as the shorthand { output }", () => {
    expect(resultOutput("shorthand")).toEqual({
      type: "object",
      properties: { url: { type: "string" }, status: { type: "integer" } },
    });
  });

  it("a named import (renamed) of a const from a module inside the agent directory", () => {
    expect(resultOutput("import")).toEqual(URL_STATUS);
  });

  it("an import of an import that stays inside the agent directory", () => {
    expect(resultOutput("import-chain")).toEqual(URL_STATUS);
  });

  it("the SDK imported as a namespace, the tool as a default export, imported as .js", () => {
    expect(resultOutput("sdk-namespace")).toEqual({ type: "object", required: ["url"] });
  });

  it("another tool's output may be built at load; it is recorded as loaded", () => {
    const [tool] = agent("non-result-output").tools;
    expect(tool).toMatchObject({
      name: "list_links",
      result: false,
      output: { type: "array", items: { type: "string" } },
    });
    expect(agent("non-result-output").resultTool).toBeUndefined();
  });
});
