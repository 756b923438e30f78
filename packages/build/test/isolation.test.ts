// Issue #21: project code runs at build time too (tool and connection modules are loaded to learn
// their schemas), so it must get what a worker gets at run time: the sandbox, the unprivileged
// uid, no secret in its environment, nothing left running afterwards. Each test is one of the
// issue's reproductions, run through the real build with real processes.

import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapAvailable } from "@opencomputer/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildIsolation, buildProject, checkProject, UNPRIVILEGED_ID } from "../src/index.ts";
import { errorProbe, type Probe, probeProject, toolProbe } from "./isolation-probe.ts";

const KEYS = {
  OPENCOMPUTER_API_KEYS: "oc_key_isolation_test",
  ANTHROPIC_API_KEY: "sk-ant-isolation",
};
const saved = Object.fromEntries(Object.keys(KEYS).map((k) => [k, process.env[k]]));
const outside = mkdtempSync(join(tmpdir(), "oc-other-project-"));
const otherSecret = join(outside, "secret.key");
// Readable by anyone: only the bind list can keep it out of the sandbox.
const shared = mkdtempSync(join(tmpdir(), "oc-shared-"));
const linked = join(shared, "shared.txt");
const projects: string[] = [];
let server: Server;
let url = "";

beforeAll(async () => {
  Object.assign(process.env, KEYS);
  writeFileSync(otherSecret, "other-project-secret\n", { mode: 0o600 });
  chmodSync(shared, 0o755);
  writeFileSync(linked, "outside the project\n", { mode: 0o644 });
  server = createServer((_, res) => res.end("host"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  server.close();
  rmSync(outside, { recursive: true, force: true });
  rmSync(shared, { recursive: true, force: true });
  for (const dir of projects) rmSync(dir, { recursive: true, force: true });
});

function targets() {
  // A sleep whose argument no other process has: found in the host's /proc whatever its pid.
  const marker = `${4000 + Math.floor(Math.random() * 1000)}.${process.pid}${Date.now() % 100000}`;
  return { otherSecret, linked, url, marker };
}

function project(kind: "tool" | "hang" | "connection", t: ReturnType<typeof targets>): string {
  const dir = probeProject(kind, t);
  projects.push(dir);
  return dir;
}

/** Host pids whose command line holds the marker (a zombie's is empty, and counts as gone). */
function withMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker))
        found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Waits a moment for a SIGKILL to land: a killed namespace takes its members down in turn. */
async function survivors(marker: string): Promise<number[]> {
  const deadline = Date.now() + 3000;
  let found = withMarker(marker);
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    found = withMarker(marker);
  }
  for (const pid of found) process.kill(pid, "SIGKILL");
  return found;
}

const MINIMAL_ENV = [
  "HOME",
  "LANG",
  "NODE_CHANNEL_FD",
  "NODE_CHANNEL_SERIALIZATION_MODE",
  "NODE_ENV",
  "PATH",
  "PWD",
  "TMPDIR",
];

const ROOT = process.getuid?.() === 0;

/** What every mode guarantees: no secret in the environment, no privileges, no system secrets. */
function expectConfined(probe: Probe): void {
  expect(probe.uid).not.toBe(0);
  expect(probe.apiKeys).toBeNull();
  expect(probe.anthropic).toBeNull();
  expect(probe.envKeys.filter((k) => !MINIMAL_ENV.includes(k))).toEqual([]);
  expect(probe.shadow).not.toBe("read");
}

const MODES = [
  {
    name: "in the bubblewrap sandbox (the default)",
    isolation: (dir: string) => buildIsolation(dir),
    // Not there at all; no way out to the host's loopback either.
    expectReach(probe: Probe) {
      expect(probe.uid).toBe(UNPRIVILEGED_ID);
      expect(probe.shadow).toBe("ENOENT");
      expect(probe.otherSecret).toBe("ENOENT");
      expect(probe.ownSecret).toBe("ENOENT");
      expect(probe.ownEnv).toBe("ENOENT");
      expect(probe.gitConfig).toBe("ENOENT");
      expect(probe.viaLink).toBe("ENOENT");
      expect(probe.network).not.toBe("reached");
    },
  },
  {
    name: "without bubblewrap (OPENCOMPUTER_SANDBOX=0)",
    isolation: (dir: string) => buildIsolation(dir, { OPENCOMPUTER_SANDBOX: "0" }),
    // As uid 65534 the files are there but not readable; as your own user, they are yours.
    expectReach(probe: Probe) {
      if (!ROOT) return;
      expect(probe.uid).toBe(UNPRIVILEGED_ID);
      expect(probe.otherSecret).toBe("EACCES");
      expect(probe.ownSecret).toBe("EACCES");
    },
  },
];

describe.each(MODES)("project code at build time (issue #21), $name", (mode) => {
  it.runIf(bwrapAvailable() || !mode.name.includes("sandbox"))(
    "a tool module's top level: no privileges, no keys, no secrets, nothing left running",
    { timeout: 60_000 },
    async () => {
      const t = targets();
      const dir = project("tool", t);
      const result = await checkProject(dir, { isolation: mode.isolation(dir) });
      // Looked for (and killed) first, so a failing assertion below leaves nothing running.
      const left = await survivors(t.marker);
      expect(result.errors).toEqual([]);
      const probe = toolProbe(result.agents[0]?.tools[0]?.description);
      expectConfined(probe);
      mode.expectReach(probe);
      expect(left).toEqual([]);
    },
  );

  it.runIf(bwrapAvailable() || !mode.name.includes("sandbox"))(
    "a module that loops forever is killed at the time limit, with everything it started",
    { timeout: 60_000 },
    async () => {
      const t = targets();
      const dir = project("hang", t);
      const result = await checkProject(dir, {
        loadTimeoutMs: 1500,
        isolation: mode.isolation(dir),
      });
      expect(result.errors.map((e) => e.code)).toEqual(["tool_module_load_timeout"]);
      expect(await survivors(t.marker)).toEqual([]);
    },
  );

  it.runIf(bwrapAvailable() || !mode.name.includes("sandbox"))(
    "a connection module's top level gets the same confinement",
    { timeout: 60_000 },
    async () => {
      const t = targets();
      const dir = project("connection", t);
      const result = await buildProject(dir, { isolation: mode.isolation(dir) });
      const left = await survivors(t.marker);
      const error = result.errors.find((e) => e.code === "connection_module_load_failed");
      const probe = errorProbe(error?.message);
      expectConfined(probe);
      mode.expectReach(probe);
      expect(left).toEqual([]);
    },
  );
});
