// Hostile project code for the isolation tests: modules that, at load, record what they can reach
// (uid, the parent's API keys, /etc/shadow, another project's key file, the project's own
// `.opencomputer`, the network) and start a detached `sleep` that tries to outlive the build.
// What they saw comes back through the build itself: a tool's description (recorded from the
// loaded module) or a connection module's error message.

import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// At the repository's root (so `@opencomputer/agent` resolves, gitignored), not under
// packages/build: the sandbox binds the loader's own package whole, as a real project never is.
const OUTPUT = fileURLToPath(new URL("../../../test-output", import.meta.url));

/** What the module saw at load. */
export interface Probe {
  uid: number;
  apiKeys: string | null;
  anthropic: string | null;
  envKeys: string[];
  shadow: string;
  otherSecret: string;
  ownSecret: string;
  ownEnv: string;
  /** `<project>/.git/config` (a remote URL may hold a token). */
  gitConfig: string;
  /** A world-readable file outside the project, through a symlink at the project's root. */
  viaLink: string;
  network: string;
}

export interface ProbeTargets {
  /** A 0600 file outside the project, standing for another project's `secret.key`. */
  otherSecret: string;
  /** A world-readable file outside the project, which `<project>/leak` links to the directory of. */
  linked: string;
  /** A loopback URL the host answers on. */
  url: string;
  /** A unique argument of the detached `sleep`, to find it in the host's /proc afterwards. */
  marker: string;
}

const PROBE = (t: ProbeTargets, dir: string) => `
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

function tryRead(path: string): string {
  try { readFileSync(path); return "read"; } catch (e) { return (e as { code?: string }).code ?? String(e); }
}
// Its own session and process group: a process-group kill of the loader does not reach it.
spawn("sleep", ["${t.marker}"], { detached: true, stdio: "ignore" }).unref();
const network = await fetch(${JSON.stringify(t.url)}, { signal: AbortSignal.timeout(2000) }).then(
  () => "reached",
  (e) => String(e?.cause?.code ?? e?.name ?? e),
);
export const probe = JSON.stringify({
  uid: process.getuid?.() ?? -1,
  apiKeys: process.env.OPENCOMPUTER_API_KEYS ?? null,
  anthropic: process.env.ANTHROPIC_API_KEY ?? null,
  envKeys: Object.keys(process.env).sort(),
  shadow: tryRead("/etc/shadow"),
  otherSecret: tryRead(${JSON.stringify(t.otherSecret)}),
  ownSecret: tryRead(${JSON.stringify(join(dir, ".opencomputer", "secret.key"))}),
  ownEnv: tryRead(${JSON.stringify(join(dir, ".env.local"))}),
  gitConfig: tryRead(${JSON.stringify(join(dir, ".git", "config"))}),
  viaLink: tryRead(${JSON.stringify(join(dir, "leak", basename(t.linked)))}),
  network,
});
`;

const AGENT = `import { useModel, useTool } from "@opencomputer/agent";
import { probeTool } from "./tools/probe.ts";
export default function Agent() { useModel("script/x"); useTool(probeTool); return "probe"; }
`;

const TOOL = `import { defineTool } from "@opencomputer/agent";
import { probe } from "../probe.ts";
export const probeTool = defineTool({ name: "probe", description: probe, run: () => ({}) });
`;

const HANG = (marker: string) => `import { spawn } from "node:child_process";
import { defineTool } from "@opencomputer/agent";
spawn("sleep", ["${marker}"], { detached: true, stdio: "ignore" }).unref();
export const probeTool = defineTool({ name: "probe", description: "hangs", run: () => ({}) });
for (;;) {}
`;

const CONNECTION = `import { probe } from "../agents/probe/probe.ts";
throw new Error("PROBE" + probe + "PROBE");
`;

export type ProbeKind = "tool" | "hang" | "connection";

/**
 * A project under the repository's test-output (so `@opencomputer/agent` resolves), readable by
 * other users as a real project is, with its secrets (a 0600 key file in `.opencomputer`,
 * `.env.local`, `.git/config`) and a symlink `leak` to a readable directory outside it.
 */
export function probeProject(kind: ProbeKind, targets: ProbeTargets): string {
  const dir = join(
    OUTPUT,
    `isolation-${kind}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
  );
  const files: Record<string, string> = {
    "opencomputer/agents/probe/agent.ts": AGENT,
    "opencomputer/agents/probe/probe.ts": PROBE(targets, dir),
    "opencomputer/agents/probe/tools/probe.ts": kind === "hang" ? HANG(targets.marker) : TOOL,
  };
  if (kind === "connection") files["opencomputer/connections/probe.ts"] = CONNECTION;
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true, mode: 0o755 });
    writeFileSync(join(dir, file), text, { mode: 0o644 });
  }
  const secrets: Record<string, string> = {
    ".opencomputer/secret.key": "own-project-secret\n",
    // The dev server's secrets file, and a git remote with a token: readable by others, as
    // people leave them.
    ".env.local": "STRIPE_KEY=sk_live_isolation\n",
    ".git/config": '[remote "origin"]\n  url = https://x:ghp_isolation@github.com/o/r\n',
  };
  for (const [file, text] of Object.entries(secrets)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text, { mode: file.includes("secret.key") ? 0o600 : 0o644 });
  }
  symlinkSync(dirname(targets.linked), join(dir, "leak"));
  for (let d = dir; d.startsWith(OUTPUT); d = dirname(d)) chmodSync(d, 0o755);
  return dir;
}

/** The probe a tool module reported through its description. */
export function toolProbe(description: string | undefined): Probe {
  return JSON.parse(description ?? "null") as Probe;
}

/** The probe a connection module reported through its load error. */
export function errorProbe(message: string | undefined): Probe {
  const match = /PROBE(.*)PROBE/.exec(message ?? "");
  if (!match) throw new Error(`no probe in: ${message}`);
  return JSON.parse(match[1]!) as Probe;
}
