// Real `opencomputer server --store postgres://…` processes for the cluster tests, on a copy of
// ./fixture (inside the repository, so its `@opencomputer/agent` import resolves as a user's
// would), plus the few HTTP calls and log reads the tests need.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const repo = resolve(import.meta.dirname, "../../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
export const KEY = "oc_cluster_test_key";

export interface ServerProcess {
  name: string;
  runtimeId: string;
  url: string;
  child: ChildProcess;
  pid: number;
  /** Everything it printed, for failure messages. */
  output(): string;
}

export interface ClusterProject {
  dir: string;
  /** Lines the fixture's tools append: one per phase of every run. */
  runsFile: string;
  remove(): void;
}

export interface ToolRun {
  pid: number;
  phase: "start" | "done";
  sessionId: string;
  toolCallId: string;
  at: number;
}

export function prepareProject(name: string): ClusterProject {
  const dir = join(repo, "test-output", `${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(join(import.meta.dirname, "fixture", "opencomputer"), join(dir, "opencomputer"), {
    recursive: true,
  });
  const runsFile = join(dir, "runs.ndjson");
  writeFileSync(runsFile, "");
  return { dir, runsFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function readRuns(project: ClusterProject): ToolRun[] {
  if (!existsSync(project.runsFile)) return [];
  return readFileSync(project.runsFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ToolRun);
}

/** Lease timings short enough for a test: a dead process's sessions move within ~2.5 s. */
export const TIMINGS = {
  OPENCOMPUTER_LEASE_MS: "2000",
  OPENCOMPUTER_RECOVERY_INTERVAL_MS: "250",
  OPENCOMPUTER_IDLE_RELEASE_MS: "200",
};

export function startServer(
  name: string,
  project: ClusterProject,
  storeUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const runtimeId = `rt_${name}`;
  const child = spawn(
    process.execPath,
    [bin, "server", "--store", storeUrl, "--dir", project.dir, "--port", "0"],
    {
      env: {
        ...process.env,
        ...TIMINGS,
        OPENCOMPUTER_API_KEYS: KEY,
        OPENCOMPUTER_API_KEY: "",
        OPENCOMPUTER_MODEL: "script/work",
        OPENCOMPUTER_RUNTIME_ID: runtimeId,
        OC_CLUSTER_RUNS: project.runsFile,
        OC_STEP_MS: "600",
        // Tool runs are logged with the server's pid, so the agent code runs in its process.
        OPENCOMPUTER_EXECUTION: "in-process",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout!.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr!.on("data", (chunk) => {
    out += String(chunk);
  });
  return new Promise((done, fail) => {
    const onData = () => {
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (!url) return;
      child.stdout!.off("data", onData);
      child.off("exit", onExit);
      done({ name, runtimeId, url, child, pid: child.pid!, output: () => out });
    };
    const onExit = (code: number | null) =>
      fail(new Error(`server ${name} exited ${code}: ${out}`));
    child.stdout!.on("data", onData);
    child.once("exit", onExit);
  });
}

/** SIGKILL and wait for the exit, so the test knows the process is gone. */
export function kill(server: ServerProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    server.child.once("exit", () => done());
    server.child.kill(signal);
  });
}

export async function api<T>(
  server: ServerProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`${method} ${path} on ${server.name}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

export async function createSessionOn(server: ServerProcess): Promise<string> {
  const { session } = await api<{ session: { id: string } }>(server, "POST", "/sessions", {
    agentId: "worker@development",
  });
  return session.id;
}

export async function sendTurn(server: ServerProcess, sessionId: string): Promise<string> {
  const { turnId } = await api<{ turnId: string }>(server, "POST", `/sessions/${sessionId}/turns`, {
    input: { text: "work" },
  });
  return turnId;
}

/** Polls `check` every 50 ms until it returns a value (not undefined) or `timeoutMs` passes. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 40_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
