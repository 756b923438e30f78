import { describe, expect, it } from "vitest";
import { defineTool, ToolDefinitionError } from "../src/index.ts";
import { isTool } from "../src/internal.ts";
import { expectFailure, loose } from "./helpers.ts";

const run = () => ({ ok: true });
const base = { name: "lookup_order", description: "Look up an order", run };

function refused(definition: unknown, code: string, field: string, ...fragments: string[]) {
  const error = expectFailure(
    () => defineTool(loose(definition)),
    ToolDefinitionError,
    code,
    ...fragments,
  );
  expect(error.details.path).toBe(field);
  return error;
}

describe("defineTool: the definition itself", () => {
  it.each([
    ["null", null],
    ["a string", "lookup_order"],
    ["an array", [base]],
    ["a function", () => base],
    ["a class instance", new (class Def {})()],
  ])("refuses %s", (_label, value) => {
    refused(value, "tool_definition_invalid", "", "defineTool", "object literal");
  });
});

describe("defineTool: name", () => {
  it("is required", () => {
    refused({ description: "d", run }, "tool_name_invalid", "name", '"name" is required');
  });

  it("must be a string", () => {
    refused({ ...base, name: 7 }, "tool_name_invalid", "name", "must be a string", "a number");
  });

  it("must not be empty", () => {
    refused({ ...base, name: "" }, "tool_name_invalid", "name", "must not be empty");
  });

  it.each(["look up", "order.lookup", "café", "a/b"])("refuses the characters in %j", (name) => {
    const error = refused({ ...base, name }, "tool_name_invalid", "name", JSON.stringify(name));
    expect(error.message).toContain("letters, digits, underscores and hyphens");
  });

  it("allows at most 64 characters", () => {
    expect(defineTool({ ...base, name: "a".repeat(64) }).name).toHaveLength(64);
    expect(defineTool({ ...base, name: "x" }).name).toBe("x");
    refused({ ...base, name: "a".repeat(65) }, "tool_name_invalid", "name", "65 characters", "64");
  });

  it("accepts letters, digits, underscores and hyphens", () => {
    expect(defineTool({ ...base, name: "Web-Search_2" }).name).toBe("Web-Search_2");
  });

  it('reserves "ask" for the platform\'s question tool', () => {
    const error = refused(
      { ...base, name: "ask" },
      "tool_name_reserved",
      "name",
      '"ask"',
      "question tool",
      'useTool("ask")',
    );
    expect(error.details.tool).toBe("ask");
    expect(defineTool({ ...base, name: "ask_manager" }).name).toBe("ask_manager");
  });
});

describe("defineTool: description", () => {
  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["whitespace only", " \n\t "],
    ["not a string", 42],
  ])("refuses a description that is %s", (_label, description) => {
    const error = refused(
      { ...base, description },
      "tool_description_invalid",
      "description",
      'defineTool("lookup_order")',
      '"description"',
    );
    expect(error.details.tool).toBe("lookup_order");
  });
});

describe("defineTool: run, or preview and apply", () => {
  const preview = () => ({ title: "Change" });
  const apply = () => undefined;
  const def = { name: "attach", description: "Move a customer onto a plan" };

  it("refuses run together with preview", () => {
    refused({ ...def, run, preview, apply }, "tool_implementation_invalid", "preview", '"run"');
  });

  it("refuses run together with apply alone", () => {
    refused({ ...def, run, apply }, "tool_implementation_invalid", "apply", "both");
  });

  it("refuses preview without apply", () => {
    refused({ ...def, preview }, "tool_implementation_invalid", "apply", 'no "apply"');
  });

  it("refuses apply without preview", () => {
    refused({ ...def, apply }, "tool_implementation_invalid", "preview", 'no "preview"');
  });

  it("refuses a tool with no implementation", () => {
    refused(
      def,
      "tool_implementation_invalid",
      "run",
      "needs an implementation",
      'defineTool("attach")',
    );
  });

  it.each([
    ["run", { run: "run" }],
    ["preview", { preview: {}, apply }],
    ["apply", { preview, apply: 1 }],
  ])("refuses a %s that is not a function", (field, implementation) => {
    refused(
      { ...def, ...implementation },
      "tool_implementation_invalid",
      field,
      "must be a function",
    );
  });

  it("gives each mistake its own message", () => {
    const messages = [
      { ...def, run, preview, apply },
      { ...def, preview },
      { ...def, apply },
      def,
      { ...def, run: 1 },
    ].map((d) => {
      try {
        defineTool(loose(d));
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    });
    expect(new Set(messages).size).toBe(messages.length);
  });

  it("sets kind from the implementation", () => {
    expect(defineTool({ ...def, run }).kind).toBe("run");
    const approval = defineTool({ ...def, preview, apply });
    expect(approval.kind).toBe("approval");
    expect(approval.run).toBeUndefined();
  });

  it("treats keys set to undefined as absent", () => {
    const tool = defineTool(loose({ ...def, run, preview: undefined, input: undefined }));
    expect(tool.kind).toBe("run");
    expect("input" in tool).toBe(false);
  });
});

describe("defineTool: result", () => {
  const output = { type: "object", properties: { status: { type: "integer" } } };

  it.each([
    ["the string true", "true"],
    ["1", 1],
    ["null", null],
  ])("refuses %s", (_label, result) => {
    refused(
      { ...base, output, result },
      "tool_result_invalid",
      "result",
      '"result" must be true or false',
    );
  });

  it("requires output on the result tool", () => {
    refused(
      { ...base, result: true },
      "tool_result_requires_output",
      "output",
      'defineTool("lookup_order")',
      '"output"',
    );
  });

  it("requires run on the result tool", () => {
    refused(
      {
        name: "attach",
        description: "d",
        output,
        result: true,
        preview: () => ({ title: "t" }),
        apply: run,
      },
      "tool_result_requires_run",
      "run",
      'defineTool("attach")',
      '"run"',
    );
  });

  it("normalises result to a boolean", () => {
    expect(defineTool({ ...base, output, result: true }).result).toBe(true);
    expect(defineTool({ ...base, result: false }).result).toBe(false);
    expect(defineTool(base).result).toBe(false);
  });
});

describe("defineTool: unknown keys", () => {
  it("refuses a misspelt key and suggests the intended one", () => {
    const error = refused(
      { name: "lookup_order", descripton: "Look up an order", run },
      "tool_unknown_key",
      "descripton",
      'defineTool("lookup_order")',
      '"descripton"',
      'did you mean "description"?',
      "Allowed keys: name, description, input, output, result, run, preview, apply",
    );
    expect(error.details.suggestion).toBe("description");
  });

  it("suggests our key for names other SDKs use", () => {
    refused(
      { ...base, parameters: { type: "object" } },
      "tool_unknown_key",
      "parameters",
      'did you mean "input"?',
    );
  });

  it("lists every unknown key and suggests nothing when nothing is close", () => {
    const error = refused({ ...base, zzz: 1, qqq: 2 }, "tool_unknown_key", "zzz", '"zzz", "qqq"');
    expect(error.message).not.toContain("did you mean");
  });

  it("refuses the kind a spread tool would carry", () => {
    const tool = defineTool(base);
    refused({ ...tool, name: "copy" }, "tool_unknown_key", "kind", '"kind"');
  });

  it("is a compile-time error too", () => {
    // @ts-expect-error descripton is not a key of ToolDefinition
    expect(() => defineTool({ name: "x", descripton: "d", run })).toThrow(ToolDefinitionError);
  });
});

describe("defineTool: the returned tool", () => {
  const input = {
    type: "object",
    properties: { orderId: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
    required: ["orderId"],
  };

  it("is frozen, with deep-frozen copies of its schemas", () => {
    const tool = defineTool({ ...base, input, output: { type: "string" } });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.input)).toBe(true);
    expect(Object.isFrozen((tool.input!.properties as Record<string, object>).orderId)).toBe(true);
    expect(Object.isFrozen(tool.input?.required)).toBe(true);
    expect(Object.isFrozen(tool.output)).toBe(true);
    expect(tool.input).not.toBe(input);
    expect(tool.input).toEqual(input);
  });

  it("does not change when the caller's schema changes afterwards", () => {
    const mine = structuredClone(input);
    const tool = defineTool({ ...base, input: mine });
    mine.properties.orderId.type = "number";
    mine.required.push("tags");
    expect(tool.input).toEqual(input);
  });

  it("keeps the author's functions and text", () => {
    const tool = defineTool(base);
    expect(tool).toMatchObject({
      name: "lookup_order",
      description: "Look up an order",
      kind: "run",
    });
    expect(tool.run).toBe(run);
  });

  it("carries a non-enumerable registry-symbol brand that isTool checks", () => {
    const tool = defineTool(base);
    const brand = Object.getOwnPropertyDescriptor(tool, Symbol.for("opencomputer.tool"));
    expect(brand).toMatchObject({ value: true, enumerable: false });
    expect(isTool(tool)).toBe(true);
    expect(isTool({ ...tool })).toBe(false);
    expect(isTool(Object.create(tool))).toBe(false);
    expect(isTool(base)).toBe(false);
    expect(isTool(null)).toBe(false);
    expect(isTool("lookup_order")).toBe(false);
  });
});
