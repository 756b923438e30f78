// Compiles the published packages' sources to JavaScript, declarations and source maps, and
// lays each package's output out as packages/<p>/dist/ (the console's built app is in
// dist/app/, next to its compiled module). One compiler run over all of them: their imports of each other stay
// `@opencomputer/<x>` specifiers, resolved at run time through node_modules. Types are checked
// by `tsc -b`; this run only emits (`noCheck`), which takes seconds.

import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT, type Workspace } from "./workspaces.ts";

const OUT = join(ROOT, ".tsbuild", "dist");

export function compile(workspaces: Workspace[]): void {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const config = join(OUT, "tsconfig.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: "../../tsconfig.base.json",
      compilerOptions: {
        noEmit: false,
        noCheck: true,
        rootDir: "../../packages",
        outDir: ".",
        declaration: true,
        sourceMap: true,
        inlineSources: true,
        // `./x.ts` imports become `./x.js` in the JavaScript (declarations: see below).
        rewriteRelativeImportExtensions: true,
        lib: ["ES2023", "DOM", "DOM.Iterable"],
        jsx: "react-jsx",
      },
      include: workspaces.map((w) =>
        w.manifest.name === "@opencomputer/console"
          ? `../../packages/${w.dir}/index.ts`
          : `../../packages/${w.dir}/src`,
      ),
    }),
  );
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", config], { stdio: "inherit" });
}

/** Copies one workspace's compiled files into its dist/. */
export function place(w: Workspace): string {
  const console = w.manifest.name === "@opencomputer/console";
  const from = console ? join(OUT, w.dir) : join(OUT, w.dir, "src");
  const target = join(w.path, "dist");
  // The console's dist/ also holds its built app (dist/app), which stays.
  if (!console) rmSync(target, { recursive: true, force: true });
  for (const file of walk(from)) {
    const rel = relative(from, file);
    // The console's compiled directory also holds its tests' output; it ships index.* only.
    if (console && !/^index\.(js|js\.map|d\.ts)$/.test(rel)) continue;
    const dest = join(target, rel);
    mkdirSync(dirname(dest), { recursive: true });
    if (file.endsWith(".d.ts")) writeFileSync(dest, declarationText(readFileSync(file, "utf8")));
    else if (file.endsWith(".js.map")) writeFileSync(dest, mapText(file, dest));
    else cpSync(file, dest);
  }
  return target;
}

/**
 * The compiler keeps `./x.ts` in declarations; a user's compiler resolves `./x.js` to the
 * `x.d.ts` next to it under every module resolution, so the declarations say that.
 */
export function declarationText(text: string): string {
  return text.replace(
    /((?:from\s+|import\s*\(\s*)["'])(\.{1,2}\/[^"']+?)\.tsx?(["'])/g,
    (_all, head: string, path: string, tail: string) => `${head}${path}.js${tail}`,
  );
}

/**
 * A source map's `sources` made relative to where the map now lives, so they name the sources
 * in the repository; the published package has no src/, but each map carries its sources' text.
 */
function mapText(file: string, dest: string): string {
  const map = JSON.parse(readFileSync(file, "utf8")) as { sources: string[] };
  map.sources = map.sources.map((source) =>
    relative(dirname(dest), resolve(dirname(file), source)),
  );
  return JSON.stringify(map);
}

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}
