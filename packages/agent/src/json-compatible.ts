// Tool results, progress metadata and schemas must survive JSON.stringify/JSON.parse
// unchanged. JSON.stringify itself silently drops or rewrites many values (undefined
// properties vanish, NaN becomes null, a Date becomes a string, a Map becomes {}), so we
// refuse them up front and say where they are, instead of storing something the author
// did not return.
//
// Decisions:
// - Plain objects are those whose prototype is Object.prototype (of any realm, so values
//   built in a vm context pass) or null: Object.create(null) serialises exactly like {}.
// - Only own enumerable properties are inspected, as JSON.stringify does; non-enumerable
//   ones are invisible to JSON and to spreading, so they are not the author's data.
// - Enumerable symbol-keyed properties are refused: JSON would drop them silently.
// - -0 is accepted (it serialises as 0); non-index properties on arrays are not checked,
//   because finding them would cost an allocation per array on every call.
// - Shared references (the same object twice, not inside itself) are fine; only cycles fail.

import { describeObject, describeValue } from "./describe-value.ts";
import { JsonCompatibilityError } from "./errors.ts";
import { formatPath, type PathSegment } from "./json-path.ts";
import type { JsonValue } from "./types.ts";

/** Deepest nesting of arrays/objects accepted; deeper values are almost always a bug. */
export const MAX_JSON_DEPTH = 64;

const HINTS: Record<string, string> = {
  undefined: "; omit the property or use null",
  "a Date": "; use date.toISOString()",
  "a BigInt": "; convert it to a string or a number",
  NaN: "; JSON has no NaN (it would become null)",
  Infinity: "; JSON has no Infinity (it would become null)",
  "-Infinity": "; JSON has no -Infinity (it would become null)",
  "a Map": "; use Object.fromEntries(map)",
  "a Set": "; use an array, e.g. [...set]",
};

/**
 * Returns `value` typed as JsonValue when it survives a JSON round trip unchanged;
 * otherwise throws JsonCompatibilityError (code `not_json_compatible`) whose
 * `details.path` is the JSON path of the first offending value, e.g. `$.items[3].price`.
 */
export function assertJsonCompatible(value: unknown, rootPath = "$"): JsonValue {
  // Segments and ancestors are pushed/popped as we descend; the path string is only
  // built when something fails.
  visit(value, rootPath, [], []);
  return value as JsonValue;
}

function visit(value: unknown, root: string, path: PathSegment[], ancestors: object[]): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (Number.isFinite(value)) return;
      throw refusal(root, path, describeValue(value));
    case "object":
      if (value === null) return;
      break;
    default:
      throw refusal(root, path, describeValue(value));
  }

  const container = value as object;
  const seenAt = ancestors.indexOf(container);
  if (seenAt !== -1) {
    const where = formatPath(root, path);
    throw new JsonCompatibilityError(
      "not_json_compatible",
      `${where} is not JSON-compatible: it contains itself (a cycle back to ${formatPath(root, path.slice(0, seenAt))})`,
      { path: where, found: "a cycle" },
    );
  }
  if (ancestors.length >= MAX_JSON_DEPTH) {
    const where = formatPath(root, path);
    throw new JsonCompatibilityError(
      "not_json_compatible",
      `${where} is not JSON-compatible: it nests deeper than the limit of ${MAX_JSON_DEPTH} levels`,
      { path: where, found: "too deep", limit: MAX_JSON_DEPTH },
    );
  }

  if (Array.isArray(container)) {
    ancestors.push(container);
    for (let i = 0; i < container.length; i++) {
      path.push(i);
      if (!(i in container)) throw refusal(root, path, "a hole in a sparse array");
      visit(container[i], root, path, ancestors);
      path.pop();
    }
    ancestors.pop();
    return;
  }

  if (!isPlainObject(container)) throw refusal(root, path, describeObject(container));

  const symbols = Object.getOwnPropertySymbols(container);
  for (const symbol of symbols) {
    if (Object.prototype.propertyIsEnumerable.call(container, symbol)) {
      throw refusal(root, path, `a symbol-keyed property ${String(symbol)}`);
    }
  }

  ancestors.push(container);
  const record = container as Record<string, unknown>;
  for (const key in record) {
    // for-in also walks inherited keys (a polluted Object.prototype); JSON ignores those.
    if (!Object.hasOwn(record, key)) continue;
    path.push(key);
    visit(record[key], root, path, ancestors);
    path.pop();
  }
  ancestors.pop();
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === null || proto === Object.prototype) return true;
  // Object.prototype of another realm: its own prototype is null and its constructor is
  // that realm's Object.
  if (Object.getPrototypeOf(proto) !== null) return false;
  const ctor = (proto as { constructor?: unknown }).constructor;
  return typeof ctor === "function" && ctor.name === "Object";
}

function refusal(root: string, path: PathSegment[], found: string): JsonCompatibilityError {
  const where = formatPath(root, path);
  return new JsonCompatibilityError(
    "not_json_compatible",
    `${where} is not JSON-compatible: found ${found}${HINTS[found] ?? ""}`,
    { path: where, found },
  );
}

/**
 * UTF-8 byte length of JSON.stringify(value): what the value costs on the wire and in
 * storage (the runtime caps result-tool values at 8 KiB).
 */
export function jsonByteLength(value: JsonValue): number {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) {
    throw new JsonCompatibilityError(
      "not_json_compatible",
      `$ is not JSON-compatible: found ${describeValue(value)}`,
      { path: "$", found: describeValue(value) },
    );
  }
  return utf8Length(text);
}

// Counted by hand rather than with Buffer/TextEncoder so it allocates nothing and works
// outside Node. JSON.stringify escapes lone surrogates, so every surrogate here is paired.
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
