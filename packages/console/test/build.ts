import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "vite";

const consoleDir = resolve(import.meta.dirname, "..");

/**
 * Builds the console from its current source into `outDir`, so the tests exercise what is
 * checked out (never a stale `dist/`) and do not race a server that serves `dist/`.
 */
export async function buildConsoleInto(outDir: string): Promise<string> {
  rmSync(outDir, { recursive: true, force: true });
  await build({
    configFile: join(consoleDir, "vite.config.ts"),
    logLevel: "error",
    build: { outDir, emptyOutDir: true },
  });
  return outDir;
}
