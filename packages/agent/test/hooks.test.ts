import { describe, expect, it } from "vitest";
import {
  type AgentInput,
  defineTool,
  useCurrentInput,
  useInput,
  useModel,
  useTool,
} from "../src/index.ts";
import { RenderError, renderAgent } from "../src/internal.ts";
import { expectFailure } from "./helpers.ts";

const SLOT = Symbol.for("opencomputer.agent.renderContext");
const input: AgentInput = { source: "user", text: "Where is my order A1?" };

function render(agent: () => string) {
  return renderAgent(agent, { input });
}

function selecting(select: () => void) {
  return render(() => {
    select();
    return "";
  });
}

describe("hooks outside a render", () => {
  it.each([
    ["useModel", () => useModel("anthropic/claude-sonnet-4.6")],
    ["useTool", () => useTool("ask")],
    ["useInput", () => useInput()],
    ["useCurrentInput", () => useCurrentInput()],
  ])("%s throws hooks_outside_render", (_name, call) => {
    const error = expectFailure(call, RenderError, "hooks_outside_render");
    expect(error.message).toBe("OpenComputer hooks can only run while rendering an agent");
  });

  it("keep the render in the registry-symbol slot only while rendering", () => {
    let during: unknown;
    render(() => {
      during = (globalThis as Record<symbol, unknown>)[SLOT];
      return "";
    });
    expect(during).toMatchObject({ input });
    expect((globalThis as Record<symbol, unknown>)[SLOT]).toBeUndefined();
  });
});

describe("useInput", () => {
  it("returns the input being rendered, under both names", () => {
    let seen: AgentInput[] = [];
    render(() => {
      seen = [useInput(), useCurrentInput()];
      return "";
    });
    expect(seen).toEqual([input, input]);
    expect(seen[0]).toBe(input);
  });
});

describe("useModel", () => {
  const modelOf = (select: () => void) =>
    render(() => {
      select();
      return "";
    }).model;

  it("keeps a provider/model id", () => {
    expect(modelOf(() => useModel("anthropic/claude-sonnet-4.6"))).toBe(
      "anthropic/claude-sonnet-4.6",
    );
    expect(modelOf(() => useModel("openrouter/meta/llama-3"))).toBe("openrouter/meta/llama-3");
  });

  it("normalises the object form", () => {
    expect(modelOf(() => useModel({ provider: "openai", model: "gpt-5" }))).toBe("openai/gpt-5");
  });

  it("is undefined when the agent selects none", () => {
    expect(modelOf(() => {})).toBeUndefined();
  });

  it("lets the last call win", () => {
    const model = modelOf(() => {
      useModel("anthropic/claude-haiku");
      useModel({ provider: "anthropic", model: "claude-opus" });
    });
    expect(model).toBe("anthropic/claude-opus");
  });

  it.each(["claude-sonnet", "/claude", "anthropic/", "anthropic/claude sonnet", ""])(
    "refuses %j",
    (id) => {
      expectFailure(
        () => modelOf(() => useModel(id)),
        RenderError,
        "model_id_invalid",
        JSON.stringify(id),
        "provider/model",
      );
    },
  );

  it.each([
    [{ provider: "", model: "x" }, "provider"],
    [{ provider: "a/b", model: "x" }, "provider"],
    [{ provider: "anthropic", model: "" }, "model"],
    [{ provider: "anthropic" }, "model"],
  ])("refuses the object %j", (selection, field) => {
    const error = expectFailure(
      () => modelOf(() => useModel(selection as never)),
      RenderError,
      "model_id_invalid",
      `"${field}"`,
    );
    expect(error.details.path).toBe(field);
  });

  it("refuses a value of another type", () => {
    expectFailure(
      () => modelOf(() => useModel(42 as never)),
      RenderError,
      "model_id_invalid",
      "a number",
    );
  });
});

describe("useTool", () => {
  it("refuses an object defineTool did not return, naming it", () => {
    const definition = { name: "lookup_order", description: "d", run: () => 1 };
    expectFailure(
      () => selecting(() => useTool(definition as never)),
      RenderError,
      "tool_invalid",
      '"lookup_order"',
      "defineTool()",
    );
  });

  it("refuses other values, saying what they were", () => {
    expectFailure(
      () => selecting(() => useTool(undefined as never)),
      RenderError,
      "tool_invalid",
      "undefined",
    );
    expectFailure(
      () => selecting(() => useTool(3 as never)),
      RenderError,
      "tool_invalid",
      "a number",
    );
  });

  it("refuses a malformed built-in id", () => {
    expectFailure(() => selecting(() => useTool("")), RenderError, "tool_invalid", 'useTool("")');
    expectFailure(
      () => selecting(() => useTool("web search")),
      RenderError,
      "tool_invalid",
      '"web search"',
    );
  });

  it("accepts a tool and a built-in id", () => {
    const tool = defineTool({ name: "lookup_order", description: "d", run: () => 1 });
    const result = render(() => {
      useTool(tool);
      useTool("web-search");
      return "";
    });
    expect(result.tools).toEqual([tool]);
    expect(result.builtInTools).toEqual(["web-search"]);
  });
});
