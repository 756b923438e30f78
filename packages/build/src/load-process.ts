// The one way the build starts a process that runs project code (the tool loader, the connection
// loader): `node --import tsx <script>` with a worker's minimal environment, through the sandbox
// launcher when the isolation has one (no network, the project read-only without its secrets),
// else as a plain process in a group of its own, as the isolation's uid. `stop` kills it with
// everything it started (process-tree.ts).

import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentLocation } from "@opencomputer/runtime";
import { workerEnv } from "@opencomputer/workers";
import type { BuildIsolation } from "./isolation.ts";
import { killTree } from "./process-tree.ts";
import type { Project } from "./project.ts";

const require = createRequire(import.meta.url);
const TSX = require.resolve("tsx");
const TSX_LOADER = pathToFileURL(TSX).href;

export interface LoadProcess {
  child: ChildProcess;
  /** Kills the process and everything it started; safe to call more than once. */
  stop(): void;
}

export function startLoadProcess(
  project: Project,
  isolation: BuildIsolation,
  script: string,
  args: string[],
  stdio: StdioOptions,
  only?: string,
): LoadProcess {
  // Never process.env: the parent's API keys and provider credentials stay in the parent.
  let command = {
    command: process.execPath,
    args: ["--import", TSX_LOADER, script, ...args],
    cwd: only ?? project.root,
    env: workerEnv(isolation.env),
  } as Parameters<NonNullable<BuildIsolation["launcher"]>>[0];
  if (isolation.launcher) {
    const where = location(project, script, only);
    command = isolation.launcher(command, { location: where, network: false });
  } else if (isolation.uid !== undefined) {
    command = { ...command, uid: isolation.uid, gid: isolation.gid ?? isolation.uid };
  }
  const child = spawn(command.command, command.args, {
    cwd: command.cwd,
    env: command.env,
    ...(command.uid !== undefined ? { uid: command.uid } : {}),
    ...(command.gid !== undefined ? { gid: command.gid } : {}),
    // Its own process group, so a group kill reaches what it started without setsid.
    detached: true,
    stdio,
  });
  const started: LoadProcess = {
    child,
    stop() {
      if (!live.delete(started)) return;
      killTree(child.pid, !isolation.launcher);
    },
  };
  live.add(started);
  if (live.size === 1 && !exitHooked) {
    exitHooked = true;
    // A build that ends (process.exit, an uncaught error) with a load still running takes it
    // along: a plain process in its own group would not see the parent go. (A sandbox also
    // dies with its parent through bwrap's --die-with-parent.)
    process.on("exit", () => {
      for (const load of [...live]) load.stop();
    });
  }
  return started;
}

const live = new Set<LoadProcess>();
let exitHooked = false;

/**
 * What the sandbox binds, read-only: the project without its secrets, and the loader's code.
 * With `only` (a directory inside the project, e.g. an uploaded deployment being checked), that
 * directory and the project's packages instead of the project's entries.
 */
function location(project: Project, script: string, only?: string): AgentLocation {
  const nodeModules = join(project.root, "node_modules");
  return {
    agentId: "build",
    deploymentId: "build",
    projectDir: project.root,
    cwd: only ?? project.root,
    loader: script,
    args: null,
    readPaths: [
      ...(only
        ? [only, ...(existsSync(nodeModules) ? [nodeModules] : [])]
        : projectEntries(project.root)),
      ...ancestorModules(project.root),
      TSX.slice(0, TSX.lastIndexOf("/node_modules/") + "/node_modules".length),
      packageRoot(realpathSync(require.resolve("@opencomputer/agent"))),
    ],
    // Also when a bind above the project covers them (a project inside a bound package).
    hidePaths: only ? [] : [join(project.root, ".opencomputer")],
  };
}

/**
 * The project's top-level entries a load may read. Not the dot-entries: the store, API keys,
 * secrets, computers and deployments (`.opencomputer`), the dev server's `.env*` files, `.git`
 * (a remote URL with a token), `.npmrc` (a registry token); loading modules needs none of them.
 * Not a symlink that leaves the project either: bwrap would follow it on the host (a link to
 * `~/.aws` would be bound in), while links further down resolve inside the sandbox only.
 */
function projectEntries(root: string): string[] {
  // A missing project is the build's error to report (agent_not_found), not the loader's.
  if (!existsSync(root)) return [];
  const real = realpathSync(root);
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith("."))
    .map((entry) => join(root, entry.name))
    .filter((path) => {
      if (!lstatSync(path).isSymbolicLink()) return true;
      const target = existsSync(path) ? realpathSync(path) : "";
      return target === real || target.startsWith(`${real}/`);
    });
}

/** The directory of the nearest package.json above `file`. */
function packageRoot(file: string): string {
  let dir = dirname(file);
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/**
 * node_modules directories above the project, and the nearest package.json there when the
 * project has none: where Node resolves the project's packages and its module type from (a
 * project inside a workspace).
 */
function ancestorModules(root: string): string[] {
  const found: string[] = [];
  let typeFile = existsSync(join(root, "package.json"));
  for (let dir = dirname(root); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules"))) found.push(join(dir, "node_modules"));
    if (!typeFile && existsSync(join(dir, "package.json"))) {
      found.push(join(dir, "package.json"));
      typeFile = true;
    }
  }
  return found;
}
