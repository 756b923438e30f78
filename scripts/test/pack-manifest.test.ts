// The package.json each package is published with (scripts/pack/manifest.ts), for every
// workspace we publish: the published name, exports into dist/ with `types` first, only dist/
// (and the few extras) in `files`, true engines, and sibling dependencies as npm aliases. The
// packed-project test (npm run test:packed) proves the tarballs themselves install and run.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { declarationText } from "../pack/build-dist.ts";
import { publishedManifest } from "../pack/manifest.ts";
import { publishedWorkspaces } from "../pack/workspaces.ts";

interface Published {
  name: string;
  version: string;
  engines: Record<string, string>;
  exports: Record<string, Record<string, string>>;
  files: string[];
  dependencies?: Record<string, string>;
  devDependencies?: unknown;
}

const workspaces = publishedWorkspaces();
const ours = new Set(workspaces.map((w) => w.manifest.name));

describe("published package.json", () => {
  it("covers every package meant for users, not the test kit", () => {
    expect([...ours].sort()).toEqual(
      [
        "agent",
        "build",
        "computers",
        "connections",
        "console",
        "event-delivery",
        "event-receiver",
        "event-stream",
        "mcp",
        "models",
        "protocol",
        "react",
        "runtime",
        "sandbox",
        "schedules",
        "server",
        "sql-store",
        "store-postgres",
        "store-sqlite",
        "telemetry",
        "webhooks",
        "workers",
      ]
        .map((x) => `@opencomputer/${x}`)
        .concat("opencomputer")
        .sort(),
    );
  });

  it.each(workspaces.map((w) => [w.manifest.name, w] as const))("%s", (_name, w) => {
    const m = publishedManifest(w, ours) as Published;
    expect(m.name).toMatch(/^opencomputer-runtime(-[a-z-]+)?$/);
    expect(m.version).toBe(w.manifest.version);
    expect(m.engines).toEqual({ node: ">=20.19.0", npm: ">=10" });
    expect(m.files[0]).toBe("dist");
    expect(m.devDependencies).toBeUndefined();
    for (const [subpath, conditions] of Object.entries(m.exports)) {
      expect(Object.keys(conditions), subpath).toEqual(["types", "default"]);
      expect(conditions.types).toMatch(/^\.\/dist\/.+\.d\.ts$/);
      expect(conditions.default).toBe(conditions.types!.replace(/\.d\.ts$/, ".js"));
    }
    if (w.manifest.name === "@opencomputer/console") expect(m.dependencies).toBeUndefined();
    for (const [dep, spec] of Object.entries(m.dependencies ?? {})) {
      if (ours.has(dep)) expect(spec).toMatch(/^npm:opencomputer-runtime-[a-z-]+@\d+\.\d+\.\d+$/);
      else expect(spec).not.toMatch(/^npm:/);
    }
  });
});

describe("declarationText", () => {
  it("points relative .ts/.tsx imports at .js, leaving packages and other strings alone", () => {
    const text = [
      'export { a } from "./a.ts";',
      'export type { B } from "../b/b.tsx";',
      'type C = import("./c.ts").C;',
      'import type { D } from "@opencomputer/protocol";',
      'declare const file: "agent.ts";',
    ].join("\n");
    expect(declarationText(text)).toBe(
      [
        'export { a } from "./a.js";',
        'export type { B } from "../b/b.js";',
        'type C = import("./c.js").C;',
        'import type { D } from "@opencomputer/protocol";',
        'declare const file: "agent.ts";',
      ].join("\n"),
    );
  });
});

describe("modules started by path", () => {
  it("are named with siblingModule, never as a .ts URL the published dist/ would not have", () => {
    const found: string[] = [];
    for (const w of workspaces) {
      const src = join(w.path, "src");
      if (!existsSync(src)) continue;
      for (const file of readdirSync(src, { recursive: true, encoding: "utf8" })) {
        if (!/\.tsx?$/.test(file)) continue;
        const text = readFileSync(join(src, file), "utf8");
        if (/new URL\(\s*["'`][^"'`]*\.tsx?["'`]\s*,\s*import\.meta\.url/.test(text))
          found.push(`${w.dir}/src/${file}`);
      }
    }
    expect(found).toEqual([]);
  });
});
