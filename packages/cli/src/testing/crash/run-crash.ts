// `opencomputer test --crash`: each scenario once without kills (the baseline: how many commits
// and outbound requests a run makes, and which calls), then `runs` times with the runtime
// SIGKILLed at a kill point chosen by a seeded random generator, resumed by a fresh runtime
// process over the same store, and checked (invariants.ts). The seed is printed: the same seed
// chooses the same kill points again.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { siblingModule } from "@opencomputer/workers";
import type { ScenarioSpec } from "../scenario.ts";
import { callSignature, checkCrashRun, type EgressLine, type RepeatedWrite } from "./invariants.ts";
import { describeKill, type KillPoint } from "./kill-points.ts";

const CHILD = siblingModule(import.meta.url, "child");
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
/** A resumed run that is killed by nothing still gets this many fresh runtimes at most. */
const MAX_RESUMES = 3;

export interface CrashOptions {
  runs: number;
  seed: number;
  json: boolean;
}

export interface CrashOutcome {
  agent: string;
  file: string;
  name: string;
  runs: number;
  /** Kill points a run of the scenario has (2 per commit, 1 per outbound request). */
  killPoints: number;
  kills: number;
  violations: Array<{ run: number; kill: string; message: string }>;
  nonIdempotent: Array<RepeatedWrite & { run: number; kill: string }>;
  error?: string;
}

export async function runCrashMode(
  projectDir: string,
  scenarios: ScenarioSpec[],
  options: CrashOptions,
): Promise<number> {
  const random = mulberry32(options.seed);
  const outcomes: CrashOutcome[] = [];
  if (!options.json)
    process.stderr.write(`crash mode: seed ${options.seed}, ${options.runs} runs per scenario\n`);
  const runtimes = new Runtimes();
  try {
    for (const spec of scenarios)
      outcomes.push(await crashScenario(runtimes, projectDir, spec, options.runs, random));
  } finally {
    runtimes.close();
  }
  const failed = outcomes.filter(
    (o) => o.error || o.violations.length > 0 || o.nonIdempotent.length > 0,
  );
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ seed: options.seed, passed: outcomes.length - failed.length, failed: failed.length, scenarios: outcomes })}\n`,
    );
  } else process.stdout.write(formatCrash(outcomes, options.seed));
  return failed.length === 0 ? 0 : 1;
}

async function crashScenario(
  runtimes: Runtimes,
  projectDir: string,
  spec: ScenarioSpec,
  runs: number,
  random: () => number,
): Promise<CrashOutcome> {
  const outcome: CrashOutcome = {
    agent: spec.agentId,
    file: spec.file,
    name: spec.name,
    runs: 0,
    killPoints: 0,
    kills: 0,
    violations: [],
    nonIdempotent: [],
  };
  const base = await oneRun(runtimes, projectDir, spec, undefined);
  if (!base.done) {
    outcome.error = `the scenario does not run to its end without kills: ${base.stderr.slice(-500)}`;
    base.cleanup();
    return outcome;
  }
  const baseline = spec.model.startsWith("script/")
    ? await withStore(base.dbPath, (store) => callSignature(store, base.done!.sessionId))
    : undefined;
  const { commits, egress } = base.done;
  base.cleanup();
  const seenTools = new Set<string>();
  const points = killPoints(commits, egress, random).slice(0, runs);
  outcome.killPoints = 2 * commits + egress;
  for (const [index, kill] of points.entries()) {
    const run = index + 1;
    const killText = describeKill(kill);
    const result = await oneRun(runtimes, projectDir, spec, kill);
    outcome.runs++;
    outcome.kills += result.kills;
    try {
      if (!result.done) {
        outcome.violations.push({
          run,
          kill: killText,
          message: `no runtime finished the scenario after the kill: ${result.stderr.slice(-300)}`,
        });
        continue;
      }
      const lines = existsSync(result.egressLog)
        ? readFileSync(result.egressLog, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as EgressLine)
        : [];
      const checked = await withStore(result.dbPath, (store) =>
        checkCrashRun(store, result.done!.sessionId, lines, baseline),
      );
      for (const message of checked.violations)
        outcome.violations.push({ run, kill: killText, message });
      for (const r of checked.repeated) {
        // One report per tool and request is enough to act on.
        const key = `${r.tool} ${r.request}`;
        if (seenTools.has(key)) continue;
        seenTools.add(key);
        outcome.nonIdempotent.push({ ...r, run, kill: killText });
      }
    } finally {
      result.cleanup();
    }
  }
  return outcome;
}

interface Done {
  sessionId: string;
  status: string;
  commits: number;
  egress: number;
}

/** One run on a fresh store: a runtime (killed at `kill`), then fresh ones until it is done. */
async function oneRun(
  runtimes: Runtimes,
  projectDir: string,
  spec: ScenarioSpec,
  kill: KillPoint | undefined,
) {
  const dir = mkdtempSync(join(tmpdir(), "oc-crash-"));
  const dbPath = join(dir, "test.db");
  const egressLog = join(dir, "egress.log");
  writeFileSync(egressLog, "");
  let kills = 0;
  let stderr = "";
  let done: Done | undefined;
  for (let attempt = 0; attempt <= MAX_RESUMES && !done; attempt++) {
    const exit = await runtimes.run({
      projectDir,
      dbPath,
      egressLog,
      spec,
      ...(attempt === 0 && kill ? { kill } : {}),
    });
    stderr += exit.stderr;
    if (exit.signal === "SIGKILL") kills++;
    const line = exit.stdout.split("\n").find((l) => l.startsWith('{"done":true'));
    if (line) done = JSON.parse(line) as Done;
    else if (exit.signal !== "SIGKILL") break;
  }
  return {
    dbPath,
    egressLog,
    kills,
    stderr,
    done,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runtime processes, one loaded ahead: a kill is followed by a fresh runtime without waiting. */
class Runtimes {
  private spare: Spawned | undefined;

  async run(
    args: object,
  ): Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null }> {
    const child = this.spare ?? spawnRuntime();
    this.spare = spawnRuntime();
    await child.loaded;
    child.proc.stdin!.write(`${JSON.stringify(args)}\n`);
    return child.exited;
  }

  close(): void {
    this.spare?.proc.kill("SIGKILL");
    this.spare = undefined;
  }
}

interface Spawned {
  proc: ChildProcess;
  loaded: Promise<void>;
  exited: Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null }>;
}

function spawnRuntime(): Spawned {
  const proc = spawn(process.execPath, ["--import", TSX, CHILD], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let onLoaded!: () => void;
  const loaded = new Promise<void>((resolve) => {
    onLoaded = resolve;
  });
  proc.stdin!.on("error", () => {});
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    if (stdout.startsWith("loaded\n")) onLoaded();
  });
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null }>(
    (resolve) =>
      proc.on("close", (_code, signal) => {
        onLoaded();
        resolve({ stdout, stderr, signal });
      }),
  );
  return { proc, loaded, exited };
}

async function withStore<T>(
  dbPath: string,
  read: (store: ReturnType<typeof createSqliteStore>) => Promise<T>,
) {
  const store = createSqliteStore({ path: dbPath });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

function formatCrash(outcomes: CrashOutcome[], seed: number): string {
  const lines: string[] = [];
  for (const o of outcomes) {
    const ok = !o.error && o.violations.length === 0 && o.nonIdempotent.length === 0;
    lines.push(
      `${o.agent} › ${o.name}  ${ok ? "pass" : "FAIL"}  ${o.runs} of ${o.killPoints} kill points, ${o.kills} kills  ${o.file}`,
    );
    if (o.error) lines.push(`    error: ${o.error}`);
    for (const v of o.violations.slice(0, 20))
      lines.push(`    invariant broken (run ${v.run}, killed ${v.kill}): ${v.message}`);
    for (const n of o.nonIdempotent)
      lines.push(
        `    tool ${n.tool} is not idempotent: its ${n.phase} sent ${n.request} ${n.times} times for call ${n.callId} (run ${n.run}, killed ${n.kill}) without an Idempotency-Key carrying the ${n.phase === "apply" ? "decision id (decision.id)" : "call id (sessionId:toolCallId)"}; keys sent: ${JSON.stringify(n.idempotencyKeys)}`,
      );
  }
  const failed = outcomes.filter(
    (o) => o.error || o.violations.length > 0 || o.nonIdempotent.length > 0,
  ).length;
  lines.push(
    "",
    `${outcomes.length - failed} passed, ${failed} failed (seed ${seed}; rerun with --seed ${seed})`,
  );
  return `${lines.join("\n")}\n`;
}

/**
 * Every kill point of a run that makes `commits` commits and `egress` outbound requests, in a
 * seeded random order: `--runs N` tries the first N, so no point is tried twice and N at or above
 * the count tries them all.
 */
function killPoints(commits: number, egress: number, random: () => number): KillPoint[] {
  const all: KillPoint[] = [];
  for (let n = 1; n <= commits; n++) {
    all.push({ at: "commit", n, when: "before" }, { at: "commit", n, when: "after" });
  }
  for (let n = 1; n <= egress; n++) all.push({ at: "egress", n });
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
