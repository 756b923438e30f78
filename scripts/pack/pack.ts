// Builds every published package and packs it: `npm run pack` (or
// `node --import tsx scripts/pack/pack.ts [--out DIR]`) writes one tarball per package, under
// its published name, to DIR (default .tsbuild/tarballs) and prints their paths. docs/packages.md.
//
// Each package is staged apart (.tsbuild/stage/<p>) with the package.json it is published with
// (manifest.ts) and only the files that ship, then `npm pack` packs all stages in one run.

import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { compile, place } from "./build-dist.ts";
import { publishedManifest } from "./manifest.ts";
import { publishedWorkspaces, ROOT } from "./workspaces.ts";

export interface Packed {
  /** The workspace name (`@opencomputer/agent`, `opencomputer`). */
  name: string;
  /** The published name (`opencomputer-runtime-agent`). */
  published: string;
  tarball: string;
}

export function packAll(out = join(ROOT, ".tsbuild", "tarballs")): Packed[] {
  const workspaces = publishedWorkspaces();
  const ours = new Set(workspaces.map((w) => w.manifest.name));
  ensureConsoleBuilt();
  compile(workspaces);
  const stageRoot = join(ROOT, ".tsbuild", "stage");
  rmSync(stageRoot, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const stages: string[] = [];
  const manifests: Array<{ name: string; version: string; workspace: string }> = [];
  for (const w of workspaces) {
    place(w);
    const manifest = publishedManifest(w, ours) as {
      name: string;
      version: string;
      files: string[];
    };
    const stage = join(stageRoot, w.dir);
    mkdirSync(stage, { recursive: true });
    for (const entry of manifest.files)
      cpSync(join(w.path, entry), join(stage, entry), { recursive: true });
    writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    stages.push(stage);
    manifests.push({ ...manifest, workspace: w.manifest.name });
  }
  execFileSync("npm", ["pack", "--silent", "--pack-destination", out, ...stages], {
    cwd: stageRoot,
    stdio: ["ignore", "ignore", "inherit"],
  });
  return manifests.map((m) => {
    const tarball = join(out, `${m.name}-${m.version}.tgz`);
    if (!existsSync(tarball)) throw new Error(`npm pack wrote no ${tarball}`);
    return { name: m.workspace, published: m.name, tarball };
  });
}

/** The console ships its built app; `npm ci` builds it (prepare), a fresh clone may not have. */
function ensureConsoleBuilt(): void {
  if (existsSync(join(ROOT, "packages", "console", "dist", "app", "index.html"))) return;
  execFileSync("npm", ["run", "build", "-w", "@opencomputer/console"], {
    cwd: ROOT,
    stdio: "inherit",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  const packed = packAll(values.out ? resolve(values.out) : undefined);
  for (const p of packed) console.log(p.tarball);
}
