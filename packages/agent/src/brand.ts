// The runtime and the author's code can end up with two copies of this package (different
// install paths, bundled vs. linked), so `instanceof` or a module-private symbol would
// reject a perfectly good tool. A registry symbol is the same in every copy.

import type { Tool } from "./types.ts";

export const TOOL_BRAND = Symbol.for("opencomputer.tool");

/** True when `value` was returned by `defineTool`, from any copy of this package. */
export function isTool(value: unknown): value is Tool {
  return (
    typeof value === "object" &&
    value !== null &&
    // Own property only, so an object that merely inherits from a tool is not a tool.
    Object.hasOwn(value, TOOL_BRAND) &&
    (value as Record<symbol, unknown>)[TOOL_BRAND] === true
  );
}
