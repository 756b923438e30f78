// A small, dependency-free description of JSON shapes: one definition gives the TypeScript type
// (`Infer`), a runtime check that names the path at fault, and a one-line description for the
// docs. The protocol is written in it so the types, the drift test and docs/api.md cannot
// disagree. It covers only what JSON events and records need; it is not a general validator.

import type { JsonValue } from "./json.ts";

/** One mismatch between a value and its shape: where, and what was expected there. */
export interface Issue {
  path: string;
  message: string;
}

export interface Shape<T> {
  /** TypeScript type carrier only; never set at run time. */
  readonly __type?: T;
  /** Set on `optional(...)` shapes: the field may be absent from its object. */
  readonly optional?: true;
  check(value: unknown, path: string, issues: Issue[]): void;
  /** Compact notation for the docs, e.g. `{ tool: string, input: json }`. */
  describe(): string;
}

export type Infer<S> = S extends Shape<infer T> ? T : never;

type Fields = Record<string, Shape<unknown>>;
type OptionalKeys<F extends Fields> = {
  [K in keyof F]: F[K] extends { optional: true } ? K : never;
}[keyof F];
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type ObjectOf<F extends Fields> = Simplify<
  { [K in Exclude<keyof F, OptionalKeys<F>>]: Infer<F[K]> } & {
    [K in OptionalKeys<F>]?: Exclude<Infer<F[K]>, undefined>;
  }
>;

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}

function leaf<T>(
  name: string,
  test: (value: unknown) => boolean,
  expected: string = name,
): Shape<T> {
  return {
    check(value, path, issues) {
      if (!test(value))
        issues.push({ path, message: `expected ${expected}, got ${describeValue(value)}` });
    },
    describe: () => name,
  };
}

export const string = (): Shape<string> => leaf("string", (v) => typeof v === "string");
export const number = (): Shape<number> =>
  leaf("number", (v) => typeof v === "number" && Number.isFinite(v));
export const integer = (): Shape<number> =>
  leaf("integer", (v) => typeof v === "number" && Number.isInteger(v));
export const boolean = (): Shape<boolean> => leaf("boolean", (v) => typeof v === "boolean");
/** Any JSON value (the data of a tool, a payload): checked to be JSON, not further. */
export const json = (): Shape<JsonValue> => leaf("json", isJson, "a JSON value");

export function literal<const V extends string | number | boolean | null>(value: V): Shape<V> {
  return leaf(JSON.stringify(value), (v) => v === value);
}

/** One of a fixed set of strings. */
export function oneOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  const set = new Set<unknown>(values);
  const name = values.map((v) => JSON.stringify(v)).join(" | ");
  return leaf(name, (v) => set.has(v));
}

export function nullable<T>(shape: Shape<T>): Shape<T | null> {
  return {
    check(value, path, issues) {
      if (value !== null) shape.check(value, path, issues);
    },
    describe: () => `${shape.describe()} | null`,
  };
}

/** A field that may be absent (never `undefined` in JSON). */
export function optional<T>(shape: Shape<T>): Shape<T | undefined> & { optional: true } {
  return { ...shape, optional: true, describe: () => `${shape.describe()}?` };
}

export function array<T>(items: Shape<T>): Shape<T[]> {
  return {
    check(value, path, issues) {
      if (!Array.isArray(value)) {
        issues.push({ path, message: `expected an array, got ${describeValue(value)}` });
        return;
      }
      for (const [index, item] of value.entries()) items.check(item, `${path}[${index}]`, issues);
    },
    describe: () => `${items.describe()}[]`,
  };
}

/** An object whose keys are free and whose values share one shape. */
export function record<T>(values: Shape<T>): Shape<Record<string, T>> {
  return {
    check(value, path, issues) {
      if (!isPlainObject(value)) {
        issues.push({ path, message: `expected an object, got ${describeValue(value)}` });
        return;
      }
      for (const [key, item] of Object.entries(value)) values.check(item, `${path}.${key}`, issues);
    },
    describe: () => `{ [key]: ${values.describe()} }`,
  };
}

/**
 * An object with exactly these fields: an unknown field is an issue, so a producer that adds
 * one without declaring it here fails the drift test instead of shipping an undocumented field.
 */
export function object<F extends Fields>(fields: F): Shape<ObjectOf<F>> & { fields: F } {
  return {
    fields,
    check(value, path, issues) {
      if (!isPlainObject(value)) {
        issues.push({ path, message: `expected an object, got ${describeValue(value)}` });
        return;
      }
      for (const [key, shape] of Object.entries(fields)) {
        const present = Object.hasOwn(value, key) && value[key] !== undefined;
        if (present) shape.check(value[key], `${path}.${key}`, issues);
        else if (!shape.optional) issues.push({ path: `${path}.${key}`, message: "missing" });
      }
      for (const key of Object.keys(value)) {
        if (!Object.hasOwn(fields, key)) {
          issues.push({ path: `${path}.${key}`, message: "not part of the protocol" });
        }
      }
    },
    describe: () => {
      const parts = Object.entries(fields).map(([key, shape]) =>
        shape.optional
          ? `${key}?: ${shape.describe().slice(0, -1)}`
          : `${key}: ${shape.describe()}`,
      );
      return parts.length === 0 ? "{}" : `{ ${parts.join(", ")} }`;
    },
  };
}

/** The first option that matches wins; the issues reported are the closest option's. */
export function union<const S extends readonly Shape<unknown>[]>(
  options: S,
): Shape<Infer<S[number]>> {
  return {
    check(value, path, issues) {
      let best: Issue[] | undefined;
      for (const option of options) {
        const found: Issue[] = [];
        option.check(value, path, found);
        if (found.length === 0) return;
        if (!best || found.length < best.length) best = found;
      }
      issues.push(...(best ?? []));
    },
    describe: () => options.map((o) => o.describe()).join(" | "),
  };
}

/** The same shape, described by name in the docs (e.g. `AgentInput`) instead of spelled out. */
export function named<S extends Shape<unknown>>(name: string, shape: S): S & { inner: S } {
  return { ...shape, inner: shape, describe: () => name };
}

/** Checks a value; an empty list means it matches. */
export function check(shape: Shape<unknown>, value: unknown, path = "$"): Issue[] {
  const issues: Issue[] = [];
  shape.check(value, path, issues);
  return issues;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isJson(value: unknown, depth = 0): boolean {
  if (depth > 256) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  if (!isPlainObject(value)) return false;
  return Object.values(value).every((item) => isJson(item, depth + 1));
}
