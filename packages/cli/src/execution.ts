// Where `opencomputer dev` and `opencomputer server` run agent code: in worker processes, so no
// agent can read the store, the API keys or the secrets the control plane holds. With bubblewrap
// the workers are sandboxed too (own pid namespace, only the deployment and the runtime's code
// readable); microvm sessions need that sandbox.
//
//   OPENCOMPUTER_EXECUTION=worker       (default) worker processes
//   OPENCOMPUTER_EXECUTION=in-process   agent code in the server's own process (debugging only)
//   OPENCOMPUTER_SANDBOX=0              plain worker processes even where bubblewrap exists

import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { bwrapAvailable, bwrapLauncher, type RuntimeOptions } from "@opencomputer/runtime";

export interface ExecutionChoice {
  /** Spread into createRuntime. */
  options: Pick<RuntimeOptions, "execution" | "workers">;
  /** One line for the server's start-up banner. */
  description: string;
}

export function cliExecution(
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
): ExecutionChoice {
  const mode = env.OPENCOMPUTER_EXECUTION ?? "worker";
  if (mode === "in-process") {
    return {
      options: { execution: "in-process" },
      description: "agent code in-process (no isolation)",
    };
  }
  if (mode !== "worker") {
    throw new OpenComputerError(
      "usage",
      `OPENCOMPUTER_EXECUTION must be "worker" or "in-process"; got "${mode}"`,
      { path: "OPENCOMPUTER_EXECUTION" },
    );
  }
  const why = sandboxUnavailable(projectDir, env);
  if (why) {
    return {
      options: { execution: "worker" },
      description: `agent code in worker processes (no sandbox: ${why})`,
    };
  }
  return {
    options: { execution: "worker", workers: { sandbox: bwrapLauncher() } },
    description: "agent code in sandboxed worker processes (bubblewrap)",
  };
}

function sandboxUnavailable(projectDir: string, env: NodeJS.ProcessEnv): string | null {
  if (env.OPENCOMPUTER_SANDBOX === "0") return "OPENCOMPUTER_SANDBOX=0";
  if (!bwrapAvailable()) return "bubblewrap is not installed";
  // A root runtime starts workers as an unprivileged uid, which must be able to reach the project.
  if (process.getuid?.() === 0) {
    for (let dir = resolve(projectDir); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return `${dir} is not searchable by other users`;
      if (dirname(dir) === dir) break;
    }
  } else {
    accessSync(projectDir, constants.R_OK);
  }
  return null;
}
