import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Where `npm run build -w @opencomputer/console` (run by the root `prepare`) writes the console:
 * dist/app. The published package runs this module compiled, as dist/index.js, next to it.
 */
export const consoleDistDir = fileURLToPath(
  new URL(
    new URL(import.meta.url).pathname.endsWith(".ts") ? "./dist/app" : "./app",
    import.meta.url,
  ),
);

/** True when the built console is there to serve. */
export function consoleBuilt(dir = consoleDistDir): boolean {
  return existsSync(`${dir}/index.html`);
}
