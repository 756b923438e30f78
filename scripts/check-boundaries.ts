// Fails when a package reaches into another package's files by path, or imports a package it
// does not declare: sources may import only `dependencies`, tests, benchmarks and scripts also
// `devDependencies`. Each package then says in its package.json everything it relies on, and the
// compiler's project references (tsc -b) follow the same graph.
//
//   node --import tsx scripts/check-boundaries.ts

import { readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CODE = /\.(ts|tsx|mts|cts|js|mjs)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", ".opencomputer", "test-output", ".tsbuild"]);
const BUILTINS = new Set(builtinModules);

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface Violation {
  file: string;
  line: number;
  message: string;
}

function files(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (SKIP_DIRS.has(entry)) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) files(path, out);
    else if (CODE.test(entry)) out.push(path);
  }
  return out;
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** Shipped code: what runs when the package is used, as opposed to its tests and tools. */
function isShipped(relativePath: string): boolean {
  if (/\.config\.[cm]?[jt]s$/.test(relativePath)) return false; // build tool configuration
  return /^(src|app|bin)\//.test(relativePath) || !relativePath.includes("/");
}

/** The workspace's own tools (vitest, typescript, tsx): usable by any package's tests. */
function rootTools(root: string): Set<string> {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Manifest;
  return new Set(Object.keys(manifest.devDependencies ?? {}));
}

export function checkPackage(dir: string, tools: ReadonlySet<string> = new Set()): Violation[] {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
  const runtime = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  const dev = new Set([...Object.keys(manifest.devDependencies ?? {}), ...tools]);
  const violations: Violation[] = [];
  for (const file of files(dir)) {
    const rel = relative(dir, file).split(sep).join("/");
    // A project fixture under test/ is a user's project, with its own imports; skip those.
    if (/(^|\/)fixtures\/.*\/opencomputer\//.test(rel)) continue;
    const text = readFileSync(file, "utf8");
    const { importedFiles } = ts.preProcessFile(text, true, true);
    for (const ref of importedFiles) {
      const spec = ref.fileName;
      const line = text.slice(0, ref.pos).split("\n").length;
      const at = { file: relative(ROOT, file), line };
      if (spec.startsWith(".")) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(dir + sep)) {
          violations.push({
            ...at,
            message: `imports ${spec}, a file outside ${manifest.name}; import the package instead`,
          });
        }
        continue;
      }
      if (spec.startsWith("node:") || BUILTINS.has(packageOf(spec))) continue;
      const name = packageOf(spec);
      if (name === manifest.name) continue;
      if (runtime.has(name)) continue;
      if (dev.has(name) && !isShipped(rel)) continue;
      const where = dev.has(name)
        ? "is only a devDependency (or a workspace tool)"
        : "is not declared";
      violations.push({
        ...at,
        message: `imports ${name}, which ${where} in ${manifest.name}'s package.json`,
      });
    }
  }
  return violations;
}

export function checkWorkspace(root = ROOT): Violation[] {
  const packages = readdirSync(join(root, "packages")).map((name) => join(root, "packages", name));
  return packages
    .filter((dir) => statSync(join(dir, "package.json"), { throwIfNoEntry: false }))
    .flatMap((dir) => checkPackage(dir, rootTools(root)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const violations = checkWorkspace();
  for (const v of violations) console.error(`${v.file}:${v.line}: ${v.message}`);
  if (violations.length > 0) {
    console.error(`${violations.length} boundary violation(s)`);
    process.exit(1);
  }
  console.log("package boundaries: ok");
}
