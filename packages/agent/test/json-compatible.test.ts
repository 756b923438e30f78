import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { JsonCompatibilityError, MAX_JSON_DEPTH } from "../src/index.ts";
import { assertJsonCompatible, jsonByteLength } from "../src/internal.ts";
import { expectFailure } from "./helpers.ts";

function refused(value: unknown, path: string, ...fragments: string[]) {
  const error = expectFailure(
    () => assertJsonCompatible(value),
    JsonCompatibilityError,
    "not_json_compatible",
    `${path} is not JSON-compatible`,
    ...fragments,
  );
  expect(error.details.path).toBe(path);
  return error;
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

class Foo {
  a = 1;
}

describe("assertJsonCompatible accepts", () => {
  it.each([
    ["null", null],
    ["a string", "text"],
    ["a number", -1.5],
    ["a boolean", false],
    ["an empty object", {}],
    ["nested data", { items: [{ price: 1, tags: ["a"], note: null }], ok: true }],
    ["a null-prototype object", Object.assign(Object.create(null), { a: 1 })],
    ["a plain object from another realm", runInNewContext("({ a: [1, { b: 2 }] })")],
  ])("%s, returning it unchanged", (_label, value) => {
    expect(assertJsonCompatible(value)).toBe(value);
  });

  it("the same object twice when it is not inside itself", () => {
    const shared = { a: 1 };
    expect(() => assertJsonCompatible({ x: shared, y: [shared, shared] })).not.toThrow();
  });

  it("non-enumerable properties, which JSON ignores", () => {
    const value = { a: 1 };
    Object.defineProperty(value, "hidden", { value: () => 1, enumerable: false });
    Object.defineProperty(value, Symbol("meta"), { value: 1, enumerable: false });
    expect(() => assertJsonCompatible(value)).not.toThrow();
  });

  it(`nesting up to ${MAX_JSON_DEPTH} levels`, () => {
    expect(() => assertJsonCompatible(nested(MAX_JSON_DEPTH))).not.toThrow();
  });
});

describe("assertJsonCompatible refuses, saying what and where", () => {
  it.each([
    ["undefined", undefined, "undefined"],
    ["a function", () => 1, "a function"],
    ["a symbol", Symbol("s"), "a symbol"],
    ["a BigInt", 10n, "a BigInt"],
    ["NaN", Number.NaN, "NaN"],
    ["Infinity", Number.POSITIVE_INFINITY, "Infinity"],
    ["-Infinity", Number.NEGATIVE_INFINITY, "-Infinity"],
    ["a Date", new Date(0), "a Date"],
    ["a Map", new Map(), "a Map"],
    ["a Set", new Set(), "a Set"],
    ["a RegExp", /x/, "a RegExp"],
    ["a class instance", new Foo(), "an instance of Foo"],
    ["a typed array", new Uint8Array(2), "a Uint8Array"],
    ["an ArrayBuffer", new ArrayBuffer(2), "an ArrayBuffer"],
    ["a boxed string", Object("s"), "a boxed String"],
    ["a boxed number", Object(1), "a boxed Number"],
    ["a Promise", Promise.resolve(1), "a Promise"],
  ])("%s", (_label, value, found) => {
    const error = refused(
      { items: [0, 1, 2, { price: value }] },
      "$.items[3].price",
      `found ${found}`,
    );
    expect(error.details.found).toBe(found);
    refused(value, "$", `found ${found}`);
  });

  it("undefined as an array element", () => {
    refused([1, undefined], "$[1]", "found undefined", "null");
  });

  it("a hole in a sparse array", () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is being tested
    refused({ list: [1, , 3] }, "$.list[1]", "hole");
  });

  it("an enumerable symbol-keyed property", () => {
    refused({ a: { [Symbol("tag")]: 1 } }, "$.a", "Symbol(tag)");
  });

  it("a cycle", () => {
    const value: Record<string, unknown> = { a: { b: {} } };
    (value.a as Record<string, Record<string, unknown>>).b!.back = value.a;
    refused(value, "$.a.b.back", "cycle", "back to $.a");
  });

  it("nesting deeper than the limit", () => {
    refused(nested(MAX_JSON_DEPTH + 1), `$${"[0]".repeat(MAX_JSON_DEPTH)}`, "limit of 64");
  });

  it("quotes keys that are not identifiers", () => {
    refused({ "a b": { "x-y": [{ ok: 1n }] } }, '$["a b"]["x-y"][0].ok', "a BigInt");
  });

  it("starts paths at the given root", () => {
    const error = expectFailure(
      () => assertJsonCompatible({ when: new Date() }, "result"),
      JsonCompatibilityError,
      "not_json_compatible",
      "result.when",
    );
    expect(error.details.path).toBe("result.when");
  });
});

describe("jsonByteLength", () => {
  it.each([
    ["ascii", { a: "hello" }],
    ["two-byte characters", { name: "Café Zürich" }],
    ["three-byte characters", ["日本語", "€"]],
    ["surrogate pairs", { emoji: "🚀👩‍💻" }],
    ["a lone surrogate, which JSON escapes", "\ud800x"],
    ["numbers and nulls", [1.5, null, true, -0]],
  ])("counts UTF-8 bytes of %s", (_label, value) => {
    expect(jsonByteLength(value)).toBe(Buffer.byteLength(JSON.stringify(value), "utf8"));
  });

  it("measures the 8 KiB boundary exactly", () => {
    expect(jsonByteLength("x".repeat(8192 - 2))).toBe(8192);
  });
});
