import { describe, expect, it } from "vitest";
import { isStrictSchema, strictSchemaIssues } from "../src/providers/strict-schema.ts";

const strictObject = (
  properties: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});

describe("OpenAI strict-mode schema rules", () => {
  it("accepts the seed's lookup_order schema and the documented subset", () => {
    expect(
      strictSchemaIssues({
        type: "object",
        properties: { orderId: { type: "string", description: "The customer order ID" } },
        required: ["orderId"],
        additionalProperties: false,
      }),
    ).toEqual([]);
    const rich = strictObject(
      {
        when: { type: "string", format: "date-time" },
        code: { type: "string", pattern: "^[A-Z]{3}$" },
        count: { type: "integer", minimum: 1, maximum: 10 },
        price: { type: "number", multipleOf: 0.01, exclusiveMinimum: 0 },
        tags: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 5 },
        note: { type: ["string", "null"] },
        kind: { enum: ["a", "b"] },
        fixed: { const: "x" },
        either: { anyOf: [{ type: "string" }, strictObject({ n: { type: "number" } })] },
        node: { $ref: "#/$defs/node" },
      },
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        $defs: {
          node: strictObject({ children: { type: "array", items: { $ref: "#/$defs/node" } } }),
        },
      },
    );
    expect(strictSchemaIssues(rich)).toEqual([]);
    expect(isStrictSchema(rich)).toBe(true);
  });

  it("names the path and the reason for each object that breaks the rules", () => {
    const issues = strictSchemaIssues({
      type: "object",
      properties: {
        name: { type: "string", minLength: 1 },
        address: {
          type: "object",
          properties: { zip: { type: "string" }, city: { type: "string" } },
          required: ["zip"],
        },
        "first day": { type: "string", format: "uri" },
        extra: { type: "object", properties: {}, additionalProperties: true, required: [] },
      },
      required: ["name", "address", "first day"],
      additionalProperties: false,
    });
    expect(issues).toEqual([
      {
        path: "$",
        reason:
          "every property must be listed in required (optional ones as a union with null); not required: extra",
      },
      { path: "$.properties.name", reason: "minLength is not supported in strict mode" },
      {
        path: "$.properties.address",
        reason: "additionalProperties: false is missing; strict mode needs it on every object",
      },
      {
        path: "$.properties.address",
        reason:
          "every property must be listed in required (optional ones as a union with null); not required: city",
      },
      {
        path: '$.properties["first day"]',
        reason:
          'format "uri" is not supported; strict mode knows date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid',
      },
      { path: "$.properties.extra", reason: "additionalProperties must be false in strict mode" },
    ]);
  });

  it("refuses keywords outside the subset and keywords on the wrong type", () => {
    const reasons = (schema: unknown) =>
      strictSchemaIssues(schema).map((i) => `${i.path}: ${i.reason}`);
    expect(reasons(strictObject({ a: { type: "string", default: "x" } }))).toEqual([
      "$.properties.a: default is not supported in strict mode",
    ]);
    expect(reasons(strictObject({ a: { type: "integer", pattern: "^1" } }))).toEqual([
      "$.properties.a: pattern applies to string schemas only",
    ]);
    expect(
      reasons({
        type: "object",
        properties: {},
        required: [],
        additionalProperties: false,
        patternProperties: { "^x": { type: "string" } },
      }),
    ).toEqual(["$: patternProperties is not supported in strict mode"]);
    expect(reasons(strictObject({ a: { allOf: [{ type: "string" }] } }))).toEqual([
      "$.properties.a: a schema without type (any value) is not allowed; give it a type or anyOf",
      "$.properties.a: allOf is not supported in strict mode",
    ]);
    expect(reasons(strictObject({ a: { type: "array", items: [{ type: "string" }] } }))).toEqual([
      "$.properties.a.items: items must be one schema, not a tuple",
    ]);
    expect(
      reasons(strictObject({ a: { type: "array", items: { type: "string" }, uniqueItems: true } })),
    ).toEqual(["$.properties.a: uniqueItems is not supported in strict mode"]);
  });

  it("needs an object root and keeps within OpenAI's size limits", () => {
    expect(strictSchemaIssues({ anyOf: [{ type: "object" }] })[0]).toEqual({
      path: "$",
      reason: 'the root must be an object schema (type: "object"), not anyOf or another type',
    });
    expect(strictSchemaIssues({ type: "object", properties: {} })).toEqual([
      {
        path: "$",
        reason: "additionalProperties: false is missing; strict mode needs it on every object",
      },
    ]);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10; i++) deep = strictObject({ d: deep });
    expect(strictSchemaIssues(deep)).toEqual([
      {
        path: `$${".properties.d".repeat(10)}`,
        reason: "nested 11 levels deep; strict mode allows at most 10",
      },
    ]);
    const many = strictObject({ e: { enum: Array.from({ length: 1001 }, (_, i) => `v${i}`) } });
    expect(strictSchemaIssues(many)).toEqual([
      { path: "$", reason: "1001 enum values in all; strict mode allows at most 1000" },
    ]);
  });
});
