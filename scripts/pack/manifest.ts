// The package.json a workspace is published with. The repository's own package.json files point
// `exports` at the TypeScript sources, which the tests, `tsc -b`, the workers and `npm start` run
// directly; this one points at the compiled dist/ (types first), lists only what ships, renames
// the package to the name we publish under and depends on its siblings through npm aliases, so
// every import keeps saying `@opencomputer/<x>` (packages/cli/src/commands/init/package-names.ts).

import { aliasSpec, publishedName } from "../../packages/cli/src/commands/init/package-names.ts";
import type { Manifest, Workspace } from "./workspaces.ts";

/** What each package ships besides dist/. */
const EXTRA_FILES: Record<string, string[]> = {
  opencomputer: ["bin"],
  "@opencomputer/computers": ["scripts"],
};

/**
 * Packages whose dependencies are all bundled into what they ship: the console's React app is
 * built into dist/app, and its module (the app's directory) imports nothing.
 */
const BUNDLED = new Set(["@opencomputer/console"]);

export function publishedManifest(w: Workspace, ours: ReadonlySet<string>): object {
  const m = w.manifest;
  const published: Record<string, unknown> = {
    name: publishedName(m.name),
    version: m.version,
    ...(m.description ? { description: m.description } : {}),
    type: "module",
    // Node 20.19 or later and the npm it ships (10); every workspace says so.
    engines: enginesOf(m),
    exports: publishedExports(m),
    ...(m.bin ? { bin: m.bin } : {}),
    files: ["dist", ...(EXTRA_FILES[m.name] ?? [])],
    ...(m.dependencies && !BUNDLED.has(m.name)
      ? { dependencies: aliased(m.dependencies, ours) }
      : {}),
    ...(m.peerDependencies ? { peerDependencies: m.peerDependencies } : {}),
  };
  return published;
}

/** `"./src/x.ts"` (the console: `"./x.ts"`) → `{types: "./dist/x.d.ts", default: "./dist/x.js"}`. */
function publishedExports(m: Manifest): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [subpath, source] of Object.entries(m.exports ?? {})) {
    const match = /^\.\/(?:src\/)?(.+)\.tsx?$/.exec(source);
    if (!match)
      throw new Error(`${m.name}: export ${subpath} → ${source} is not a TypeScript source`);
    const base = `./dist/${match[1]}`;
    out[subpath] = { types: `${base}.d.ts`, default: `${base}.js` };
  }
  return out;
}

function enginesOf(m: Manifest): Record<string, string> {
  if (!m.engines?.node || !m.engines.npm)
    throw new Error(`${m.name}: engines must name node and npm`);
  return m.engines;
}

function aliased(deps: Record<string, string>, ours: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(deps).map(([name, spec]) => [
      name,
      ours.has(name) ? aliasSpec(name, spec) : spec,
    ]),
  );
}
