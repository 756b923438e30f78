// Which built-in tools a render gets without useTool: the runtime's default (`shell` where it
// offers one), a deployment's own choice (project.ts `shell: false` records none), never one the
// session cannot select, and never over an author's tool of the same name.

import { describe, expect, it } from "vitest";
import { runtimeDefaultTools, withDefaultTools } from "../../src/engine/default-tools.ts";
import type { RenderedAgent } from "../../src/ports/agent-execution.ts";
import type { BuiltInTool } from "../../src/ports/built-in-tool.ts";

const shell = { id: "shell" } as BuiltInTool;
const other = { id: "sandbox_exec" } as BuiltInTool;

function render(builtInTools: string[], toolNames: string[] = []): RenderedAgent {
  return {
    renderId: "r1",
    request: { input: { source: "user", text: "hi" }, builtInToolIds: [] },
    instructions: "x",
    model: undefined,
    tools: toolNames.map((name) => ({ name, description: "d", result: false, kind: "run" })),
    builtInTools,
    memory: [],
  };
}

describe("default built-in tools", () => {
  it("are shell where the runtime offers it, none where it does not, or what the runtime says", () => {
    expect(runtimeDefaultTools(undefined, [other, shell])).toEqual(["shell"]);
    expect(runtimeDefaultTools(undefined, [other])).toEqual([]);
    expect(runtimeDefaultTools([], [shell])).toEqual([]);
  });

  it("join a render's own selection once, after it", () => {
    expect(withDefaultTools(render(["ask"]), ["shell"]).builtInTools).toEqual(["ask", "shell"]);
    expect(withDefaultTools(render(["shell", "ask"]), ["shell"]).builtInTools).toEqual([
      "shell",
      "ask",
    ]);
    expect(withDefaultTools(render([]), []).builtInTools).toEqual([]);
  });

  it("give way to an author's tool of the same name", () => {
    expect(withDefaultTools(render([], ["shell"]), ["shell"]).builtInTools).toEqual([]);
  });
});
