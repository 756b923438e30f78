import { describe, expect, it } from "vitest";
import {
  type AgentInput,
  defineTool,
  type RenderContext,
  useInput,
  useModel,
  useTool,
} from "../src/index.ts";
import { RenderError, renderAgent } from "../src/internal.ts";
import { expectFailure } from "./helpers.ts";

const SLOT = Symbol.for("opencomputer.agent.renderContext");
const context: RenderContext = { input: { source: "user", text: "hello" } };
const slot = () => (globalThis as Record<symbol, unknown>)[SLOT];

const tool = (name: string, extra: object = {}) =>
  defineTool({ name, description: `The ${name} tool`, run: () => null, ...extra });
const selectingIn = (select: () => void, ctx: RenderContext) =>
  renderAgent(() => {
    select();
    return "";
  }, ctx);
const resultTool = (name: string) => tool(name, { output: { type: "object" }, result: true });

describe("renderAgent", () => {
  it("returns the model, tools, built-in tools and instructions", () => {
    const lookup = tool("lookup_order");
    const result = renderAgent(() => {
      useModel("anthropic/claude-sonnet-4.6");
      useTool(lookup);
      useTool("ask");
      return "Help customers check orders.";
    }, context);
    expect(result).toEqual({
      model: "anthropic/claude-sonnet-4.6",
      tools: [lookup],
      builtInTools: ["ask"],
      memory: [],
      mcpServers: [],
      subagents: [],
      connections: [],
      instructions: "Help customers check orders.",
    });
  });

  it("refuses an agent that is not a function", () => {
    expectFailure(
      () => renderAgent("agent" as never, context),
      RenderError,
      "agent_invalid",
      "a string",
    );
  });

  it("refuses an async agent and restores the slot", () => {
    const error = expectFailure(
      () =>
        renderAgent(
          (async () => {
            await Promise.resolve();
            useTool("ask"); // rejects after the render: must not become an unhandled rejection
            return "late";
          }) as never,
          context,
        ),
      RenderError,
      "agent_async",
      "must be synchronous",
    );
    expect(error.message).toContain("Promise");
    expect(slot()).toBeUndefined();
  });

  it("refuses a thenable", () => {
    // biome-ignore lint/suspicious/noThenProperty: a promise-like value is what is being tested
    const thenable = { then: (resolve: (v: string) => void) => resolve("x") };
    expectFailure(() => renderAgent(() => thenable as never, context), RenderError, "agent_async");
  });

  it.each([
    [undefined, "undefined"],
    [42, "a number"],
    [null, "null"],
    [{ text: "hi" }, "an object"],
    [["a"], "an array"],
  ])("refuses instructions that are %j", (returned, described) => {
    const error = expectFailure(
      () => renderAgent(() => returned as never, context),
      RenderError,
      "instructions_invalid",
      `returned ${described}`,
    );
    expect(error.details.returned).toBe(described);
  });

  it("lets the agent's own errors through unchanged and restores the slot", () => {
    const boom = new TypeError("boom");
    expect(() =>
      renderAgent(() => {
        throw boom;
      }, context),
    ).toThrow(boom);
    expect(slot()).toBeUndefined();
  });

  it("restores the outer render after a nested one", () => {
    const outer = tool("outer");
    const inner = tool("inner");
    let innerResult: unknown;
    const result = renderAgent(() => {
      innerResult = renderAgent(
        () => {
          useTool(inner);
          return `inner ${useInput().text}`;
        },
        { input: { source: "system", text: "nested" } },
      );
      useTool(outer);
      return `outer ${useInput().text}`;
    }, context);
    expect(result.tools).toEqual([outer]);
    expect(result.instructions).toBe("outer hello");
    expect(innerResult).toMatchObject({ tools: [inner], instructions: "inner nested" });
  });

  it("keeps the outer render current when a nested render throws", () => {
    const result = renderAgent(() => {
      expect(() => renderAgent(() => 1 as never, context)).toThrow(RenderError);
      useTool("ask");
      return "";
    }, context);
    expect(result.builtInTools).toEqual(["ask"]);
  });
});

describe("renderAgent: tool selection rules", () => {
  const selecting = (...selections: (() => void)[]) =>
    renderAgent(() => {
      for (const select of selections) select();
      return "";
    }, context);

  it("selects the same tool or built-in id once, in first-selection order", () => {
    const a = tool("a");
    const b = tool("b");
    const result = selecting(
      () => useTool(a),
      () => useTool("ask"),
      () => useTool(b),
      () => useTool(a),
      () => useTool("ask"),
    );
    expect(result.tools).toEqual([a, b]);
    expect(result.builtInTools).toEqual(["ask"]);
  });

  it("refuses two different tools with the same name", () => {
    const error = expectFailure(
      () =>
        selecting(
          () => useTool(tool("lookup_order")),
          () => useTool(tool("lookup_order")),
        ),
      RenderError,
      "tool_name_conflict",
      '"lookup_order"',
    );
    expect(error.details.tool).toBe("lookup_order");
  });

  it("refuses a built-in id that collides with a selected tool, in either order", () => {
    const search = tool("web-search");
    expectFailure(
      () =>
        selecting(
          () => useTool(search),
          () => useTool("web-search"),
        ),
      RenderError,
      "tool_name_conflict",
      '"web-search"',
      "built-in",
    );
    expectFailure(
      () =>
        selecting(
          () => useTool("web-search"),
          () => useTool(search),
        ),
      RenderError,
      "tool_name_conflict",
      '"web-search"',
      "built-in",
    );
  });

  it("refuses a second result tool, naming both", () => {
    expectFailure(
      () =>
        selecting(
          () => useTool(resultTool("report")),
          () => useTool(tool("other")),
          () => useTool(resultTool("summary")),
        ),
      RenderError,
      "result_tool_conflict",
      '"report"',
      '"summary"',
    );
  });

  it("accepts one result tool selected twice", () => {
    const report = resultTool("report");
    expect(
      selecting(
        () => useTool(report),
        () => useTool(report),
      ).tools,
    ).toEqual([report]);
  });

  it("refuses a built-in id the runtime does not offer, listing those it does", () => {
    const offered: RenderContext = { ...context, builtInToolIds: ["ask", "shell"] };
    const error = expectFailure(
      () => selectingIn(() => useTool("sandbox_exec"), offered),
      RenderError,
      "tool_unknown_builtin",
      '"sandbox_exec"',
      "ask, shell",
    );
    expect(error.details.tool).toBe("sandbox_exec");
    expect(selectingIn(() => useTool("shell"), offered).builtInTools).toEqual(["shell"]);
  });

  it("says so when the runtime offers no built-in tools", () => {
    expectFailure(
      () => selectingIn(() => useTool("ask"), { ...context, builtInToolIds: [] }),
      RenderError,
      "tool_unknown_builtin",
      "none",
    );
  });
});

describe("the seed's conditional tool", () => {
  const issueRefund = defineTool({
    name: "issue_refund",
    description: "Issue a refund for a confirmed order",
    input: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
    async run({ input }) {
      return { refunded: String(input.orderId) };
    },
  });

  function Agent() {
    const input = useInput();

    if (input.text?.toLowerCase().includes("refund")) {
      useTool(issueRefund);
    }

    return "Resolve the support request. Confirm the order before a refund.";
  }

  const toolsFor = (input: AgentInput) => renderAgent(Agent, { input }).tools.map((t) => t.name);

  it("selects issue_refund only when the input mentions a refund", () => {
    expect(toolsFor({ source: "user", text: "I want a REFUND for order A1" })).toEqual([
      "issue_refund",
    ]);
    expect(toolsFor({ source: "user", text: "Where is order A1?" })).toEqual([]);
    expect(toolsFor({ source: "system" })).toEqual([]);
  });
});

describe("the seed's ask example", () => {
  function Agent() {
    const input = useInput();
    if (input.answer) {
      return `The answer was ${input.answer.value ?? input.answer.text}. Proceed accordingly.`;
    }
    useTool("ask");
    return "Read the request, propose an approach, and ask whether to go ahead.";
  }

  it("selects ask until the answer arrives", () => {
    const asking = renderAgent(Agent, {
      input: { source: "user", text: "tidy up" },
      builtInToolIds: ["ask"],
    });
    expect(asking.builtInTools).toEqual(["ask"]);
    const answered = renderAgent(Agent, {
      input: { source: "user", answer: { questionId: "q1", value: "yes" } },
      builtInToolIds: ["ask"],
    });
    expect(answered.builtInTools).toEqual([]);
    expect(answered.instructions).toContain("The answer was yes");
  });
});
