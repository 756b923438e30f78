// The project's import graph, read from source: which modules an agent loads, so that every tool
// it may select is found, whether `useTool` is called always or only under a condition.

import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import type { BuildError } from "./errors.ts";
import { errorAt, type ParsedModule, parseModule } from "./parse.ts";
import { isInside, type Project, relativePath } from "./project.ts";

export type Resolved =
  | { kind: "module"; file: string }
  /** A data file (e.g. `.json`): bundled, but holds no tools or code to follow. */
  | { kind: "asset"; file: string }
  /** A bare specifier (`zod`, `node:fs`, `@opencomputer/agent`). */
  | { kind: "package" }
  /** A relative path that leaves the project: treated like a package, not followed. */
  | { kind: "outside"; file: string }
  | { kind: "missing" };

const CODE_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
// What TypeScript's `.js`-for-`.ts` convention may stand for, in the order tsx tries them.
const SOURCE_FOR_OUTPUT: Record<string, string[]> = {
  ".js": [".ts", ".tsx"],
  ".jsx": [".tsx"],
  ".mjs": [".mts"],
  ".cjs": [".cts"],
};

export class ModuleGraph {
  /** Milliseconds spent in the TypeScript parser (for the benchmark's parse share). */
  parseMs = 0;
  private readonly modules = new Map<string, ParsedModule>();
  private readonly resolutions = new Map<string, Resolved>();

  constructor(readonly project: Project) {}

  module(file: string): ParsedModule {
    let mod = this.modules.get(file);
    if (!mod) {
      const text = readFileSync(file, "utf8");
      const started = performance.now();
      mod = parseModule(file, relativePath(this.project, file), text);
      this.parseMs += performance.now() - started;
      this.modules.set(file, mod);
    }
    return mod;
  }

  resolve(fromFile: string, specifier: string): Resolved {
    if (!specifier.startsWith(".") && !specifier.startsWith("/")) return { kind: "package" };
    const key = `${dirname(fromFile)}\0${specifier}`;
    let resolved = this.resolutions.get(key);
    if (!resolved) {
      resolved = this.resolveFile(resolve(dirname(fromFile), specifier));
      this.resolutions.set(key, resolved);
    }
    return resolved;
  }

  /**
   * The modules `entry` loads, directly or through other modules, dependencies before the
   * modules that import them (so loading them in this order pins a failure on its source).
   */
  reachable(entry: string): { modules: string[]; errors: BuildError[] } {
    const order: string[] = [];
    const errors: BuildError[] = [];
    const visited = new Set<string>();
    const visit = (file: string) => {
      if (visited.has(file)) return;
      visited.add(file);
      const mod = this.module(file);
      for (const { specifier, node } of mod.specifiers) {
        const target = this.resolve(file, specifier);
        if (target.kind === "module") visit(target.file);
        else if (target.kind === "missing") {
          errors.push(
            errorAt(
              mod,
              node,
              "import_not_found",
              `Cannot find module "${specifier}" from ${mod.rel}`,
            ),
          );
        }
      }
      order.push(file);
    };
    visit(entry);
    return { modules: order, errors };
  }

  private resolveFile(base: string): Resolved {
    const ext = extname(base);
    const candidates: string[] = [];
    if (ext) candidates.push(base);
    for (const alt of SOURCE_FOR_OUTPUT[ext] ?? [])
      candidates.push(base.slice(0, -ext.length) + alt);
    for (const e of CODE_EXTENSIONS) candidates.push(base + e);
    for (const e of CODE_EXTENSIONS) candidates.push(resolve(base, `index${e}`));
    for (const file of candidates) {
      if (!isFile(file)) continue;
      if (!isInside(this.project.root, file)) return { kind: "outside", file };
      return CODE_EXTENSIONS.includes(extname(file))
        ? { kind: "module", file }
        : { kind: "asset", file };
    }
    return { kind: "missing" };
  }
}

function isFile(file: string): boolean {
  return existsSync(file) && statSync(file).isFile();
}
