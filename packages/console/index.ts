import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where `npm run build -w @opencomputer/console` (run by the root `prepare`) writes the console. */
export const consoleDistDir = fileURLToPath(new URL("./dist", import.meta.url));

/** True when the built console is there to serve. */
export function consoleBuilt(dir = consoleDistDir): boolean {
  return existsSync(`${dir}/index.html`);
}
