// Points a project's dependencies at the packed tarballs instead of the registry, for trying the
// packages before (or without) publishing them:
//
//   npm run use-tarballs -- <project-dir> [--from DIR]     (from the repository's root)
//
// Every package gets a `file:` dependency under the name code imports (`@opencomputer/<x>`; the
// CLI under its published name), so the aliases our packages use between themselves find their
// package already in place and `npm install` asks the registry only for third-party packages.
// The packed-project test does the same (scripts/packed-project-test.ts).

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { publishedName } from "../../packages/cli/src/commands/init/package-names.ts";
import type { Packed } from "./pack.ts";
import { publishedWorkspaces, ROOT } from "./workspaces.ts";

export const TARBALLS = join(ROOT, ".tsbuild", "tarballs");

/** `dependencies` entries for every packed package. */
export function fileDependencies(packed: Packed[]): Record<string, string> {
  return Object.fromEntries(
    packed.map((p) => [p.name === "opencomputer" ? p.published : p.name, `file:${p.tarball}`]),
  );
}

/** Adds (or replaces) the project's dependencies on our packages with the tarballs. */
export function useTarballs(projectDir: string, packed: Packed[]): void {
  const file = join(projectDir, "package.json");
  const manifest = JSON.parse(readFileSync(file, "utf8")) as {
    dependencies?: Record<string, string>;
  };
  manifest.dependencies = { ...manifest.dependencies, ...fileDependencies(packed) };
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The tarballs `npm run pack:all` left in `dir`, one per published package. */
export function packedIn(dir = TARBALLS): Packed[] {
  const files = new Set(readdirSync(dir));
  return publishedWorkspaces().map((w) => {
    const published = publishedName(w.manifest.name);
    const name = `${published}-${w.manifest.version}.tgz`;
    if (!files.has(name)) throw new Error(`${join(dir, name)} is missing: run npm run pack:all`);
    return { name: w.manifest.name, published, tarball: join(dir, name) };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    options: { from: { type: "string" } },
    allowPositionals: true,
  });
  const project = resolve(positionals[0] ?? ".");
  useTarballs(project, packedIn(values.from ? resolve(values.from) : undefined));
  console.log(`${join(project, "package.json")} now depends on the tarballs; run npm install`);
}
