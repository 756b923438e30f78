// Writes each package's TypeScript projects from its package.json, so the compiler's project
// references (`tsc -b`) follow exactly the declared dependency graph:
//
//   packages/<p>/tsconfig.json       its shipped sources; references its `dependencies`
//   packages/<p>/test/tsconfig.json  tests, benchmarks, scripts; references the package and its
//                                    `devDependencies` too (a test may use a package that
//                                    depends on this one: no cycle, as sources never do)
//
// The root tsconfig.json is the solution: `tsc -b` builds every project in dependency order.
// An import of a workspace package that is not referenced fails to compile (TS6307), so an
// undeclared dependency cannot hide. `--check` fails when a file on disk differs (CI).
//
//   node --import tsx scripts/project-references.ts [--check]

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

interface Workspace {
  dir: string;
  manifest: Manifest;
}

/** Per-package compiler options beyond the base (the console is a browser app). */
const SOURCE_OPTIONS: Record<string, Record<string, unknown>> = {
  "@opencomputer/console": { lib: ["ES2023", "DOM", "DOM.Iterable"], types: [], jsx: "react-jsx" },
  "@opencomputer/react": { lib: ["ES2023", "DOM", "DOM.Iterable"], jsx: "react-jsx" },
};
const SOURCE_DIRS: Record<string, string[]> = {
  "@opencomputer/console": ["app"],
};

function workspaces(): Map<string, Workspace> {
  const found = new Map<string, Workspace>();
  for (const name of readdirSync(join(ROOT, "packages"))) {
    const dir = join(ROOT, "packages", name);
    if (!existsSync(join(dir, "package.json"))) continue;
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
    found.set(manifest.name, { dir, manifest });
  }
  return found;
}

function refs(names: Iterable<string>, all: Map<string, Workspace>, from: string): object[] {
  return [...new Set(names)]
    .filter((name) => all.has(name))
    .sort()
    .map((name) => ({ path: relativeTo(from, all.get(name)!.dir) }));
}

function relativeTo(from: string, to: string): string {
  const a = from.split("/");
  const b = to.split("/");
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/") || ".";
}

function sourceProject(w: Workspace, all: Map<string, Workspace>): object {
  const name = w.manifest.name;
  return {
    extends: relativeTo(w.dir, join(ROOT, "tsconfig.project.json")),
    compilerOptions: {
      rootDir: ".",
      outDir: ".tsbuild/src",
      tsBuildInfoFile: ".tsbuild/src.tsbuildinfo",
      ...SOURCE_OPTIONS[name],
    },
    include: SOURCE_DIRS[name] ?? ["src"],
    references: refs(Object.keys(w.manifest.dependencies ?? {}), all, w.dir),
  };
}

function testProject(w: Workspace, all: Map<string, Workspace>): object {
  const testDir = join(w.dir, "test");
  const extra = ["bench", "scripts", "bin"].filter((d) => existsSync(join(w.dir, d)));
  const topLevel = readdirSync(w.dir).filter((f) => /\.(ts|tsx)$/.test(f));
  const deps = [
    ...Object.keys(w.manifest.dependencies ?? {}),
    ...Object.keys(w.manifest.devDependencies ?? {}),
  ];
  const options = { ...SOURCE_OPTIONS[w.manifest.name] };
  if (w.manifest.name === "@opencomputer/console") options.types = ["node"];
  return {
    extends: relativeTo(testDir, join(ROOT, "tsconfig.project.json")),
    compilerOptions: {
      rootDir: "..",
      outDir: "../.tsbuild/test",
      tsBuildInfoFile: "../.tsbuild/test.tsbuildinfo",
      ...options,
    },
    include: ["**/*", ...extra.map((d) => `../${d}/**/*`), ...topLevel.map((f) => `../${f}`)],
    exclude: ["**/node_modules", "**/.opencomputer", "**/*.json"],
    references: [{ path: ".." }, ...refs(deps, all, testDir)],
  };
}

/** The files this script owns, with the text each must have. */
export function expectedFiles(): Map<string, string> {
  const all = workspaces();
  const out = new Map<string, string>();
  const solution: object[] = [];
  for (const w of all.values()) {
    out.set(join(w.dir, "tsconfig.json"), json(sourceProject(w, all)));
    solution.push({ path: relativeTo(ROOT, w.dir) });
    if (existsSync(join(w.dir, "test"))) {
      out.set(join(w.dir, "test", "tsconfig.json"), json(testProject(w, all)));
      solution.push({ path: relativeTo(ROOT, join(w.dir, "test")) });
    }
  }
  const everything = [...all.keys()];
  out.set(
    join(ROOT, "bench", "tsconfig.json"),
    json({
      extends: "../tsconfig.project.json",
      compilerOptions: {
        rootDir: "..",
        outDir: "../.tsbuild/bench",
        tsBuildInfoFile: "../.tsbuild/bench.tsbuildinfo",
      },
      include: ["**/*", "../scripts/**/*", "../vitest.config.ts"],
      references: refs(everything, all, join(ROOT, "bench")),
    }),
  );
  out.set(
    join(ROOT, "examples", "tsconfig.json"),
    json({
      extends: "../tsconfig.project.json",
      compilerOptions: {
        rootDir: ".",
        outDir: "../.tsbuild/examples",
        tsBuildInfoFile: "../.tsbuild/examples.tsbuildinfo",
      },
      include: ["*/opencomputer/**/*"],
      references: refs(["@opencomputer/agent"], all, join(ROOT, "examples")),
    }),
  );
  solution.push({ path: "bench" }, { path: "examples" });
  out.set(join(ROOT, "tsconfig.json"), json({ files: [], references: solution }));
  return out;
}

function json(value: object): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const [path, text] of expectedFiles()) {
    // Compared as JSON, so the formatter may lay the file out as it likes.
    const current = existsSync(path) ? readFileSync(path, "utf8") : "";
    if (current && JSON.stringify(JSON.parse(current)) === JSON.stringify(JSON.parse(text)))
      continue;
    stale++;
    if (check) console.error(`${path.slice(ROOT.length + 1)} is out of date`);
    else writeFileSync(path, text);
  }
  if (check && stale > 0) {
    console.error("run: node --import tsx scripts/project-references.ts");
    process.exit(1);
  }
}
