// A module that a package starts as its own process (a worker's child, a build's loader) is
// named by path, not imported, so the compiler cannot rewrite its extension: from sources it is
// `child.ts`, in the published package (compiled to dist/) `child.js`. The caller's own URL says
// which of the two it is running from.

import { fileURLToPath } from "node:url";

/** The path of `<name>.ts` or `<name>.js` next to the module at `base` (its import.meta.url). */
export function siblingModule(base: string, name: string): string {
  const extension = new URL(base).pathname.endsWith(".ts") ? ".ts" : ".js";
  return fileURLToPath(new URL(`./${name}${extension}`, base));
}
