// Tools are shared by every render and by the runtime, so nothing reachable from one may
// change after `defineTool` has checked it.

import type { JsonSchema } from "./types.ts";

/**
 * A deep-frozen copy of a schema already known to be JSON-compatible. The JSON round trip
 * also defines a `__proto__` key as an ordinary property instead of changing a prototype.
 */
export function frozenSchemaCopy(schema: JsonSchema): JsonSchema {
  return deepFreeze(JSON.parse(JSON.stringify(schema)) as JsonSchema);
}

/** Freezes `value` and everything in it. A frozen object is taken as frozen all the way down
 * (this function froze it), so freezing the same session data on every render costs nothing. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
