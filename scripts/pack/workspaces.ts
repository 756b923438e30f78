// The packages this repository publishes, read from their package.json files: every workspace
// under packages/ except the test kit (the examples are not under packages/).

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Workspaces that stay in the repository: test helpers, never installed by users. */
const UNPUBLISHED = new Set(["@opencomputer/testkit"]);

export interface Manifest {
  name: string;
  version: string;
  description?: string;
  type?: string;
  engines?: Record<string, string>;
  exports?: Record<string, string>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export interface Workspace {
  /** The directory name under packages/ (`agent`, `cli`). */
  dir: string;
  path: string;
  manifest: Manifest;
}

export function publishedWorkspaces(): Workspace[] {
  return readdirSync(join(ROOT, "packages"))
    .sort()
    .map((dir) => {
      const path = join(ROOT, "packages", dir);
      const manifest = JSON.parse(readFileSync(join(path, "package.json"), "utf8")) as Manifest;
      return { dir, path, manifest };
    })
    .filter((w) => !UNPUBLISHED.has(w.manifest.name));
}
