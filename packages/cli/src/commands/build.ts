import { OpenComputerError } from "@opencomputer/agent";
import { runBuildCommand } from "@opencomputer/build";
import { noExtra, parse } from "../args.ts";

const OPTIONS = {
  dir: { type: "string" },
  json: { type: "boolean" },
  "load-timeout": { type: "string" },
} as const;

/** `opencomputer build|doctor [--dir DIR] [--json] [--load-timeout SECONDS]`; the exit code. */
export async function buildCommand(argv: string[], doctor: boolean): Promise<number> {
  const usage = `Usage: opencomputer ${doctor ? "doctor" : "build"} [--dir DIR] [--json] [--load-timeout SECONDS]`;
  const { values, positionals } = parse(argv, OPTIONS, usage);
  noExtra(positionals, 0, usage);
  const timeout = values["load-timeout"];
  const seconds = timeout === undefined ? undefined : Number(timeout);
  if (seconds !== undefined && !(seconds > 0)) {
    throw new OpenComputerError(
      "usage",
      `--load-timeout must be a positive number of seconds; got "${timeout}"`,
      { path: "--load-timeout" },
    );
  }
  return runBuildCommand({
    doctor,
    ...(values.dir !== undefined ? { dir: values.dir } : {}),
    ...(values.json ? { json: true } : {}),
    ...(seconds !== undefined ? { loadTimeoutSeconds: seconds } : {}),
  });
}
