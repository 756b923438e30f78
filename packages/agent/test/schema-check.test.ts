import { describe, expect, it } from "vitest";
import { defineTool, ToolDefinitionError } from "../src/index.ts";
import { expectFailure, loose } from "./helpers.ts";

const base = { name: "lookup_order", description: "Look up an order", run: () => null };

function refused(
  extra: Record<string, unknown>,
  code: string,
  field: string,
  ...fragments: string[]
) {
  const error = expectFailure(
    () => defineTool(loose({ ...base, ...extra })),
    ToolDefinitionError,
    code,
    'defineTool("lookup_order")',
    `"${field}"`,
    ...fragments,
  );
  expect(error.details.path).toBe(field);
  expect(error.details.tool).toBe("lookup_order");
  return error;
}

describe("input and output must be valid JSON Schemas", () => {
  it("reports ajv's reason and the place inside the schema", () => {
    const error = refused(
      { input: { type: "object", properties: { orderId: { type: "strnig" } } } },
      "tool_schema_invalid",
      "input",
      "at input.properties.orderId.type",
      "must be equal to one of the allowed values",
      '"string"',
    );
    expect(error.details.schemaPath).toBe("input.properties.orderId.type");
  });

  it("checks output the same way", () => {
    refused(
      { output: { type: "object", required: "url" } },
      "tool_schema_invalid",
      "output",
      "at output.required",
      "must be array",
    );
  });

  it("uses array indexes in the reported place", () => {
    refused(
      { output: { anyOf: [{ type: "string" }, { minLength: -1 }] } },
      "tool_schema_invalid",
      "output",
      "at output.anyOf[1].minLength",
    );
  });

  it("refuses a $ref that cannot be resolved", () => {
    refused(
      { input: { type: "object", properties: { a: { $ref: "#/$defs/missing" } } } },
      "tool_schema_invalid",
      "input",
      "at input.properties.a.$ref",
      "can't resolve reference #/$defs/missing",
    );
  });

  it("refuses a remote $ref, since nothing is fetched", () => {
    refused(
      { output: { $ref: "https://example.com/schemas/order.json" } },
      "tool_schema_invalid",
      "output",
      "can't resolve reference",
    );
  });

  it("refuses an invalid regular expression", () => {
    refused(
      { input: { type: "object", properties: { a: { type: "string", pattern: "(" } } } },
      "tool_schema_invalid",
      "input",
      "at input.properties.a.pattern",
    );
  });

  it("refuses a schema that is not a JSON object", () => {
    refused({ input: "object" }, "tool_schema_invalid", "input", "JSON Schema object", "a string");
    refused({ output: true }, "tool_schema_invalid", "output", "a boolean");
  });

  it("refuses a schema that is not plain JSON", () => {
    refused(
      { input: { type: "object", default: { when: new Date(0) } } },
      "tool_schema_invalid",
      "input",
      "input.default.when",
      "a Date",
    );
  });

  it("resolves local refs and accepts unknown keywords", () => {
    const tool = defineTool({
      ...base,
      input: {
        type: "object",
        properties: { item: { $ref: "#/$defs/item" } },
        $defs: { item: { type: "string", "x-order": 1 } },
      },
    });
    expect(tool.input?.$defs).toBeDefined();
  });

  it("lets two tools use the same $id", () => {
    const input = { $id: "https://example.com/order", type: "object" };
    defineTool({ ...base, input });
    expect(defineTool({ ...base, name: "again", input }).name).toBe("again");
  });
});

describe("the draft is picked by $schema", () => {
  const tuple = { type: "object", properties: { pair: { items: [{ type: "string" }] } } };

  it("defaults to 2020-12, where items must be one schema", () => {
    refused({ input: tuple }, "tool_schema_invalid", "input", "at input.properties.pair.items");
    refused(
      { input: { ...tuple, $schema: "https://json-schema.org/draft/2020-12/schema" } },
      "tool_schema_invalid",
      "input",
    );
  });

  it("accepts draft-07, where items may be a tuple and refs use definitions", () => {
    for (const $schema of [
      "http://json-schema.org/draft-07/schema#",
      "http://json-schema.org/draft-07/schema",
    ]) {
      const tool = defineTool({
        ...base,
        input: {
          ...tuple,
          $schema,
          definitions: { s: { type: "string" } },
          required: [],
          additionalProperties: { $ref: "#/definitions/s" },
        },
      });
      expect(tool.input?.$schema).toBe($schema);
    }
  });

  it("validates draft-07 schemas against the draft-07 meta-schema", () => {
    refused(
      {
        input: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          minProperties: "2",
        },
      },
      "tool_schema_invalid",
      "input",
      "at input.minProperties",
    );
  });

  it("refuses other drafts by name", () => {
    refused(
      { input: { $schema: "http://json-schema.org/draft-04/schema#", type: "object" } },
      "tool_schema_invalid",
      "input",
      "at input.$schema",
      "unsupported $schema",
      "draft-04",
    );
  });
});

describe("input must describe an object", () => {
  it("refuses another top-level type", () => {
    refused(
      { input: { type: "string" } },
      "tool_input_not_object",
      "input",
      'type: "object"',
      'got type "string"',
    );
  });

  it("refuses a schema without a type", () => {
    refused(
      { input: { properties: { a: { type: "string" } } } },
      "tool_input_not_object",
      "input",
      'no "type"',
    );
  });

  it("does not constrain output", () => {
    expect(defineTool({ ...base, output: { type: "string" } }).output).toEqual({ type: "string" });
  });
});
