// What `opencomputer build [--dir DIR] [--json]` and `opencomputer doctor [--dir DIR] [--json]`
// do once the CLI has parsed their arguments.
// Errors go to stdout as one JSON array with --json (a program reads one value whatever
// happened), otherwise to stderr as `file:line:column: code message` lines. Warnings never
// change the exit code; they go to stderr as `file:line:column: warning code message` lines in
// both modes (stdout's JSON array stays errors only), and only when there is no error to fix
// first. When the project's code could not be loaded in the sandbox, a `warning:` line on stderr
// says what confined it instead (isolation.ts).

import { buildProject } from "./build.ts";
import { type CheckResult, checkProject } from "./check.ts";
import {
  type BuildError,
  type BuildWarning,
  formatErrors,
  formatWarnings,
  sortErrors,
} from "./errors.ts";
import { secretBindingReport } from "./secret-bindings.ts";

export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const processIO: CommandIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** What `opencomputer build` / `doctor` were asked, parsed by the CLI (packages/cli/src/args.ts). */
export interface BuildCommandOptions {
  doctor: boolean;
  /** The project directory (default "."). */
  dir?: string;
  /** Errors as one JSON array on stdout. */
  json?: boolean;
  /** How long loading each module may take, in seconds (a positive number). */
  loadTimeoutSeconds?: number;
}

/** Runs the command; returns the exit code (0 ok, 1 errors found). */
export async function runBuildCommand(
  { doctor, dir = ".", json = false, loadTimeoutSeconds }: BuildCommandOptions,
  io: CommandIO = processIO,
): Promise<number> {
  const options =
    loadTimeoutSeconds === undefined
      ? {}
      : { loadTimeoutMs: Math.round(loadTimeoutSeconds * 1000) };

  if (doctor) {
    const result = await checkProject(dir, options);
    confinement(result.isolation, io);
    if (report(result.errors, json, io)) return 1;
    warn(result.warnings, io);
    io.stderr(await secretBindingReport(dir));
    for (const agent of result.agents) {
      const result = agent.resultTool ? `, result tool ${agent.resultTool.name}` : "";
      // With --json stdout carries only the array, as for build.
      (json ? io.stderr : io.stdout)(
        `${agent.agentId}: ok (${agent.tools.length} tools${result})\n`,
      );
    }
    return 0;
  }
  const result = await buildProject(dir, options);
  confinement(result.isolation, io);
  if (report(result.errors, json, io)) return 1;
  warn(result.warnings, io);
  for (const deployment of result.deployments) {
    const state = result.created.includes(deployment.agentId) ? "new" : "unchanged";
    // With --json stdout carries only the array; the summary still reaches a person.
    (json ? io.stderr : io.stdout)(`${deployment.agentId} ${deployment.id} (${state})\n`);
  }
  return 0;
}

/** Prints the errors (or `[]` with --json); true when there were any. */
function report(errors: BuildError[], json: boolean, io: CommandIO): boolean {
  const sorted = sortErrors(errors);
  if (json) {
    io.stdout(
      `${JSON.stringify(
        sorted.map(({ code, message, file, line, column }) => ({
          code,
          message,
          file,
          line,
          column,
        })),
        null,
        2,
      )}\n`,
    );
  } else if (sorted.length > 0) {
    io.stderr(`${formatErrors(sorted)}\n${sorted.length} error${sorted.length === 1 ? "" : "s"}\n`);
  }
  return sorted.length > 0;
}

/** Says so, on stderr, when the project's code loaded with less than the sandbox. */
function confinement(isolation: CheckResult["isolation"], io: CommandIO): void {
  if (isolation.kind !== "sandbox") io.stderr(`warning: ${isolation.description}\n`);
}

function warn(warnings: BuildWarning[], io: CommandIO): void {
  if (warnings.length === 0) return;
  const count = `${warnings.length} warning${warnings.length === 1 ? "" : "s"}`;
  io.stderr(`${formatWarnings(warnings)}\n${count}\n`);
}
