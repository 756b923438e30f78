// The proof that a user can use the published packages from a project of their own, outside
// this repository and without a registry (`npm run test:packed`, run by .ci/run after the tests):
//
//   1. pack every published package (scripts/pack/pack.ts);
//   2. in a new directory under the system temp dir, install the CLI from its tarball and run
//      `npx opencomputer init app`;
//   3. point the project's dependencies at the tarball files (same keys, so `@opencomputer/...`
//      stays the name agent code imports) and `npm install --offline`: our packages come from
//      the files, third-party ones from npm's cache (filled by `npm ci`);
//   4. in the project: `doctor`, `build`, `session --json` on the scripted model, `dev`
//      answering `GET /sessions` and serving the console, `import("@opencomputer/agent")` from
//      plain node, and `tsc --strict --noEmit` over the project with no error.
//
// Installs skip install scripts; better-sqlite3's native binding (the only one we need) is
// copied from this repository's install, which built it for this Node: the same pinned
// version, and compiling it again would take minutes. The temp directory is removed at the end
// unless KEEP_PACKED=1.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { type Packed, packAll } from "./pack/pack.ts";
import { fileDependencies, useTarballs } from "./pack/use-tarballs.ts";
import { ROOT } from "./pack/workspaces.ts";

const started = Date.now();
const KEY = "oc_packed_test_key_0123456789";
const require = createRequire(join(ROOT, "package.json"));

function step(what: string): void {
  console.log(`== packed: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

function fail(message: string): never {
  throw new Error(`packed-project test: ${message}`);
}

/** Runs a command; its output is returned, and shown when it fails. */
function run(
  cwd: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): string {
  try {
    return execFileSync(command, args, {
      cwd,
      env: { ...process.env, ...env },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; status?: number };
    console.error(e.stdout ?? "", e.stderr ?? "");
    fail(`\`${command} ${args.join(" ")}\` in ${cwd} exited ${e.status}`);
  }
}

const NPM_INSTALL = ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"];

function install(dir: string): void {
  run(dir, "npm", NPM_INSTALL);
  // The one native binding, built by this repository's install for the same Node (see above).
  const binding = join(dirname(require.resolve("better-sqlite3/package.json")), "build");
  cpSync(binding, join(dir, "node_modules", "better-sqlite3", "build"), { recursive: true });
}

async function main(): Promise<void> {
  step("pack");
  const packed = packAll();
  const root = mkdtempSync(join(tmpdir(), "oc-packed-"));
  // Searchable by others, as a home directory is: the sandboxed loads and workers (bubblewrap,
  // as an unprivileged uid when we are root) must reach the project and its node_modules.
  chmodSync(root, 0o755);
  if (root.startsWith(`${ROOT}/`)) fail(`${root} is inside the repository`);
  let dev: ChildProcess | undefined;
  try {
    step(`install the CLI from its tarball in ${root}/tools`);
    const tools = join(root, "tools");
    cpSync(join(ROOT, "scripts", "pack", "tools-package.json"), join(tools, "package.json"));
    const manifest = JSON.parse(readFileSync(join(tools, "package.json"), "utf8"));
    manifest.dependencies = fileDependencies(packed);
    writeFileSync(join(tools, "package.json"), JSON.stringify(manifest, null, 2));
    install(tools);

    step("npx opencomputer init app");
    console.log(run(tools, "npx", ["--offline", "opencomputer", "init", "../app"]).trimEnd());
    const app = join(root, "app");
    checkAliases(JSON.parse(readFileSync(join(app, "package.json"), "utf8")).dependencies, packed);

    step("npm install in the project, our packages from the tarballs");
    // The keys init wrote stay; their registry specs become the files. The other packages are
    // listed too, so their aliases (`npm:opencomputer-runtime-…`) resolve to files, not the registry.
    useTarballs(app, packed);
    install(app);
    fromFiles(app, packed);

    step("doctor, build");
    const cli = (args: string[], env: Record<string, string> = {}) =>
      run(app, "npx", ["--offline", "opencomputer", ...args], env);
    console.log(cli(["doctor"]).trimEnd());
    console.log(cli(["build"]).trimEnd());

    step("session --json on the scripted model");
    const lines = cli(["session", "--json", "Count the words: a b c"], {
      OPENCOMPUTER_MODEL: "script/demo",
    })
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const summary = lines.at(-1) as { type?: string; turn?: string; result?: { data?: unknown } };
    if (summary.type !== "session.summary" || summary.turn !== "completed")
      fail(`the session did not complete: ${JSON.stringify(summary)}`);
    if (JSON.stringify(summary.result?.data) !== '{"words":4,"summary":"The text has 4 words."}')
      fail(`unexpected session result ${JSON.stringify(summary.result)}`);

    step("dev answers GET /sessions and serves the console");
    dev = spawn("npx", ["--offline", "opencomputer", "dev", "--port", "0"], {
      cwd: app,
      env: { ...process.env, OPENCOMPUTER_MODEL: "script/demo", OPENCOMPUTER_API_KEY: KEY },
      stdio: ["ignore", "pipe", "inherit"],
      // Its own process group: stopping it reaches the CLI below npx.
      detached: true,
    });
    const url = await listeningUrl(dev);
    const sessions = await fetch(`${url}/sessions`, { headers: { "x-api-key": KEY } });
    const body = (await sessions.json()) as { sessions?: unknown[] };
    if (sessions.status !== 200 || !Array.isArray(body.sessions))
      fail(`GET /sessions answered ${sessions.status} ${JSON.stringify(body)}`);
    const consolePage = await fetch(`${url}/console/`);
    if (consolePage.status !== 200 || !(await consolePage.text()).includes("<"))
      fail(`GET /console/ answered ${consolePage.status}`);
    await stop(dev);
    dev = undefined;

    step("node -e \"import('@opencomputer/agent')\" without a loader");
    const exported = run(app, process.execPath, [
      "-e",
      "import('@opencomputer/agent').then((m) => console.log(Object.keys(m).sort().join(' ')))",
    ]);
    if (!/\bdefineTool\b/.test(exported)) fail(`@opencomputer/agent exports: ${exported}`);

    step("tsc --strict --noEmit over the project");
    const tsc = require.resolve("typescript/bin/tsc");
    const checked = spawnText(process.execPath, [tsc, "--strict", "--noEmit", "-p", app], app);
    if (checked.status !== 0) {
      console.error(checked.output);
      const ours = checked.output.split("\n").filter((l) => l.includes("@opencomputer/"));
      fail(`tsc found errors${ours.length ? ` (${ours.length} in our packages)` : ""}`);
    }
    step(`passed, ${packed.length} packages`);
  } finally {
    if (dev) await stop(dev);
    if (process.env.KEEP_PACKED === "1") console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

/** init wrote the SDK as an npm alias of its published name, and the CLI by its own name. */
function checkAliases(deps: Record<string, string>, packed: Packed[]): void {
  const agent = packed.find((p) => p.name === "@opencomputer/agent")!;
  const cli = packed.find((p) => p.name === "opencomputer")!;
  const version = basename(agent.tarball).match(/-(\d+\.\d+\.\d+)\.tgz$/)![1];
  if (deps["@opencomputer/agent"] !== `npm:${agent.published}@${version}`)
    fail(`init wrote @opencomputer/agent: ${deps["@opencomputer/agent"]}`);
  if (deps[cli.published] !== version) fail(`init wrote ${cli.published}: ${deps[cli.published]}`);
}

/** Every one of our packages in the project's lockfile came from its tarball file. */
function fromFiles(app: string, packed: Packed[]): void {
  const lock = JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")) as {
    packages: Record<string, { name?: string; resolved?: string }>;
  };
  const ours = new Set(packed.map((p) => p.published));
  // The lockfile names a package only where it differs from its directory (an alias).
  const nameOf = (path: string, e: { name?: string }) =>
    e.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  const entries = Object.entries(lock.packages).filter(([path, e]) => ours.has(nameOf(path, e)));
  const elsewhere = entries.filter(([, e]) => !e.resolved?.startsWith("file:"));
  if (entries.length < packed.length || elsewhere.length > 0)
    fail(
      `${entries.length} of ${packed.length} packages installed, not from the tarballs: ${elsewhere.map(([path]) => path).join(", ")}`,
    );
}

function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`dev did not start:\n${seen}`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`dev exited ${code}:\n${seen}`)));
  });
}

/** SIGTERM to the group we started (npx and the CLI under it), then waits for npx to exit. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(-child.pid!, "SIGTERM");
  await exited;
}

function spawnText(
  command: string,
  args: string[],
  cwd: string,
): { status: number; output: string } {
  try {
    return { status: 0, output: execFileSync(command, args, { cwd, encoding: "utf8" }) };
  } catch (error) {
    const e = error as { status: number; stdout?: string; stderr?: string };
    return { status: e.status, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
