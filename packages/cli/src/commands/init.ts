// `opencomputer init [dir] [--name N] [--agent ID]`: scaffolds a project (init/project-files.ts)
// and prints the commands that run it. It never overwrites: a directory that already holds a
// project, or any file it would write, is refused before anything is written.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { noExtra, out, parse } from "../args.ts";
import { projectFiles } from "./init/project-files.ts";

export const INIT_USAGE = "opencomputer init [dir] [--name NAME] [--agent ID]";
/** What npm accepts as a package name we write (lowercase, no scope). */
const PACKAGE_NAME = /^[a-z0-9][a-z0-9._-]{0,213}$/;
/** What the build accepts as an agent directory. */
const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export async function initCommand(argv: string[]): Promise<number> {
  const parsed = parse(argv, OPTIONS, INIT_USAGE);
  noExtra(parsed.positionals, 1, INIT_USAGE);
  const target = parsed.positionals[0] ?? ".";
  const written = initProject(resolve(target), {
    ...(parsed.values.name !== undefined ? { name: parsed.values.name } : {}),
    ...(parsed.values.agent !== undefined ? { agent: parsed.values.agent } : {}),
  });
  out(`Created ${written.length} files in ${resolve(target)}:`);
  for (const file of written) out(`  ${file}`);
  const cd = target === "." ? [] : [`cd ${shellWord(target)}`];
  out("\nNext:");
  for (const line of [
    ...cd,
    "npm install",
    "npx opencomputer doctor",
    'OPENCOMPUTER_MODEL=script/demo npx opencomputer session "Count the words: the quick brown fox"',
    "OPENCOMPUTER_MODEL=script/demo npx opencomputer dev    # API and console on http://127.0.0.1:4600",
  ])
    out(`  ${line}`);
  out("\nWithout OPENCOMPUTER_MODEL the agent uses its useModel (set ANTHROPIC_API_KEY).");
  return 0;
}

export interface InitOptions {
  name?: string;
  agent?: string;
}

/** Writes the project into `dir` (created when missing); returns the relative paths written. */
export function initProject(dir: string, options: InitOptions = {}): string[] {
  const name = options.name ?? packageName(basename(dir));
  if (!PACKAGE_NAME.test(name)) {
    throw new OpenComputerError(
      "init_name_invalid",
      `"${name}" is not a valid package name (lowercase letters, digits, ".", "_", "-"); pass --name`,
      { path: "name" },
    );
  }
  const agent = options.agent ?? "assistant";
  if (!AGENT_ID.test(agent)) {
    throw new OpenComputerError(
      "init_agent_invalid",
      `"${agent}" is not a valid agent id (lowercase letters, digits, "_", "-"); pass --agent`,
      { path: "agent" },
    );
  }
  const files = projectFiles({ name, agent, version: cliVersion() });
  const hasProject = existsSync(join(dir, "opencomputer"));
  const existing = [
    ...(hasProject ? ["opencomputer/"] : []),
    ...[...files.keys()].filter(
      (file) => !(hasProject && file.startsWith("opencomputer/")) && existsSync(join(dir, file)),
    ),
  ];
  if (existing.length > 0) {
    throw new OpenComputerError(
      "project_exists",
      `${dir} already has ${existing.join(", ")}; init writes only into a directory without a project (nothing was written)`,
      { path: join(dir, existing[0]!) },
    );
  }
  for (const [file, text] of files) {
    const path = join(dir, file);
    mkdirSync(dirname(path), { recursive: true });
    // `wx`: a file that appeared since the check is still not overwritten.
    writeFileSync(path, text, { flag: "wx" });
  }
  return [...files.keys()];
}

/** This CLI's version: the project depends on the packages released with it. */
function cliVersion(): string {
  // src/commands/init.ts and dist/commands/init.js are both two levels below package.json.
  const manifest = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

/** A directory name made into a package name: lowercase, other characters as "-". */
function packageName(dirName: string): string {
  const name = dirName
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+/, "");
  return name || "opencomputer-project";
}

function shellWord(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

const OPTIONS = {
  name: { type: "string" },
  agent: { type: "string" },
} as const;
