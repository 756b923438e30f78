// The runtime and the author's code may load different copies of this package. Tools and
// renders must work across them, so this loads a second, physically separate copy of src.

import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as publicA from "../src/index.ts";
import * as internalA from "../src/internal.ts";
import { expectFailure } from "./helpers.ts";

// One copy is both entries of the package: the author's and the runtime's.
const copyA = { ...publicA, ...internalA };
type Sdk = typeof copyA;

const here = dirname(fileURLToPath(import.meta.url));
let dir: string;
let copyB: Sdk;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "opencomputer-agent-copy-"));
  cpSync(join(here, "../src"), join(dir, "src"), { recursive: true });
  mkdirSync(join(dir, "node_modules"));
  const ajv = dirname(fileURLToPath(import.meta.resolve("ajv/package.json")));
  symlinkSync(ajv, join(dir, "node_modules/ajv"), "dir");
  const load = (entry: string) => import(pathToFileURL(join(dir, "src", entry)).href);
  copyB = { ...(await load("index.ts")), ...(await load("internal.ts")) } as Sdk;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const definition = { name: "lookup_order", description: "Look up an order", run: () => 1 };

describe("two copies of the package", () => {
  it("really are separate module instances", () => {
    expect(copyB.defineTool).not.toBe(copyA.defineTool);
    expect(copyB.ToolDefinitionError).not.toBe(copyA.ToolDefinitionError);
  });

  it("recognise each other's tools", () => {
    const fromA = copyA.defineTool(definition);
    expect(copyB.isTool(fromA)).toBe(true);
    expect(copyA.isTool(copyB.defineTool(definition))).toBe(true);
  });

  it("render a tool from one copy with the other", () => {
    const fromA = copyA.defineTool(definition);
    const result = copyB.renderAgent(
      () => {
        copyB.useTool(fromA);
        return "instructions";
      },
      { input: { source: "user" } },
    );
    expect(result.tools).toEqual([fromA]);
  });

  it("share the current render through the global slot", () => {
    const fromB = copyB.defineTool({ ...definition, name: "from_b" });
    const result = copyB.renderAgent(
      () => {
        copyA.useModel("anthropic/claude-sonnet-4.6");
        copyA.useTool(fromB);
        copyA.useTool("ask");
        copyA.useSubagent("researcher");
        copyA.useConnection(copyB.connection("github"));
        return `text: ${copyA.useInput().text} ${copyA.useSessionData<string>("locale")}`;
      },
      { input: { source: "user", text: "hi" }, sessionData: { locale: "fr" } },
    );
    expect(result).toEqual({
      model: "anthropic/claude-sonnet-4.6",
      tools: [fromB],
      builtInTools: ["ask"],
      memory: [],
      mcpServers: [],
      subagents: ["researcher"],
      connections: ["github"],
      instructions: "text: hi fr",
    });
  });

  it("apply the selection rules across copies", () => {
    expectFailure(
      () =>
        copyA.renderAgent(
          () => {
            copyA.useTool(copyA.defineTool(definition));
            copyB.useTool(copyB.defineTool(definition));
            return "";
          },
          { input: { source: "user" } },
        ),
      copyA.OpenComputerError,
      "tool_name_conflict",
      '"lookup_order"',
    );
  });

  it("recognise each other's errors with instanceof, by class", () => {
    const error = expectFailure(() => copyB.useInput(), copyA.RenderError, "hooks_outside_render");
    expect(error).toBeInstanceOf(copyA.OpenComputerError);
    expect(error).not.toBeInstanceOf(copyA.ToolDefinitionError);
    expect(new Error("plain")).not.toBeInstanceOf(copyA.OpenComputerError);
  });

  it("both refuse hooks once the render is over", () => {
    copyA.renderAgent(() => "", { input: { source: "user" } });
    expectFailure(() => copyB.useInput(), copyB.RenderError, "hooks_outside_render");
  });
});
