// How project code is confined while the build loads it (issue #21). Loading a tool or
// connection module runs its top-level code, and that code is the project's, so it gets what a
// worker gets at run time: the bubblewrap sandbox where it can be had, else a plain process as
// the unprivileged uid (when the build runs as root) — always with a minimal environment and
// killed with everything it started when the load ends. The choice follows the one `opencomputer
// dev`/`server` make for workers (`sandboxUnavailable`, shared with packages/cli/src/execution.ts).

import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { bwrapAvailable, bwrapLauncher, type WorkerLauncher } from "@opencomputer/workers";
import { agentEnv } from "./agent-env.ts";

/** The uid/gid project code runs as when a root build cannot sandbox it (the workers' uid). */
export const UNPRIVILEGED_ID = 65534;

export interface BuildIsolation {
  /**
   * `sandbox`: through `launcher` (bubblewrap: own namespaces, no network, read-only project,
   * uid 65534). `process`: a plain child process, as `uid`/`gid` when set.
   */
  kind: "sandbox" | "process";
  /** Turns the loader's command into the sandboxed one (kind `sandbox`). */
  launcher?: WorkerLauncher;
  /** Host uid/gid for a plain process (a root build drops to 65534 when the project allows). */
  uid?: number;
  gid?: number;
  /** One line saying what applied and, when weaker than the sandbox, why. */
  description: string;
  /** Variables the operator passes to project code by name (OPENCOMPUTER_AGENT_ENV). */
  env?: Record<string, string>;
}

/**
 * The isolation for loading `projectDir`'s code: sandboxed when bubblewrap is installed, not
 * turned off (`OPENCOMPUTER_SANDBOX=0`) and the project is reachable by the sandbox's uid.
 */
export function buildIsolation(
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
): BuildIsolation {
  const chosen = chooseIsolation(projectDir, env);
  const passed = agentEnv(env);
  return Object.keys(passed).length > 0 ? { ...chosen, env: passed } : chosen;
}

function chooseIsolation(projectDir: string, env: NodeJS.ProcessEnv): BuildIsolation {
  const why = sandboxUnavailable(projectDir, env);
  if (!why) {
    return {
      kind: "sandbox",
      launcher: bwrapLauncher(),
      description: "project code loaded in a bubblewrap sandbox (uid 65534, no network)",
    };
  }
  if (process.getuid?.() !== 0) {
    return {
      kind: "process",
      description: `project code loaded without a sandbox (${why}): a plain process as your own user, with a minimal environment`,
    };
  }
  if (!unreachable(projectDir)) {
    return {
      kind: "process",
      uid: UNPRIVILEGED_ID,
      gid: UNPRIVILEGED_ID,
      description: `project code loaded without a sandbox (${why}): a plain process as uid 65534, with a minimal environment`,
    };
  }
  return {
    kind: "process",
    description: `project code loaded without a sandbox (${why}) and AS ROOT, with a minimal environment: make the project readable by other users or install bubblewrap`,
  };
}

/** Why workers and build loads cannot be sandboxed here, or null when they can. */
export function sandboxUnavailable(projectDir: string, env: NodeJS.ProcessEnv): string | null {
  if (env.OPENCOMPUTER_SANDBOX === "0") return "OPENCOMPUTER_SANDBOX=0";
  if (!bwrapAvailable()) return "bubblewrap is not installed";
  // A root runtime starts sandboxes as an unprivileged uid, which must be able to reach the project.
  if (process.getuid?.() === 0) return unreachable(projectDir);
  // A directory that is not there is the build's own error to report (agent_not_found).
  if (existsSync(projectDir)) accessSync(projectDir, constants.R_OK);
  return null;
}

/** Why uid 65534 cannot reach `projectDir` (a directory on the way not searchable), or null. */
function unreachable(projectDir: string): string | null {
  for (let dir = resolve(projectDir); ; dir = dirname(dir)) {
    const mode = existsSync(dir) ? statSync(dir).mode : 0o777;
    if ((mode & 0o001) === 0) return `${dir} is not searchable by other users`;
    if (dirname(dir) === dir) return null;
  }
}
