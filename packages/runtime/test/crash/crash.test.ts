// Crash recovery under SIGKILL: runtime processes on one SQLite file are killed at random moments
// (inside model calls, tool calls, commits, recovery) and replaced; a last one runs every turn to
// its end. Whatever the kill points, the store must then satisfy the invariants in
// invariants.ts. CRASH_KILLS sets the number of kills (default 50), CRASH_SEED the random seed,
// CRASH_KEEP=1 keeps the temp dir for inspection.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { checkInvariants, readSnapshots } from "./invariants.ts";
import { buildScript, SCRIPT_NAME } from "./scenario.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..", "..", "..");
const CHILD = join(HERE, "child.ts");
const KILLS = Math.max(1, Number(process.env.CRASH_KILLS ?? 50));
/** Children loading ahead of the one running. */
const SPARES = 2;
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** One runtime process; it idles after `loaded` until told to go. */
class Child {
  readonly proc: ChildProcess;
  readonly exited: Promise<Exit>;
  stdout = "";
  stderr = "";
  private exit: Exit | null = null;

  constructor(readonly args: string[]) {
    this.proc = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.proc.stdout!.setEncoding("utf8").on("data", (s: string) => (this.stdout += s));
    this.proc.stderr!.setEncoding("utf8").on("data", (s: string) => (this.stderr += s));
    this.proc.stdin!.on("error", () => {});
    this.exited = new Promise((resolve) =>
      this.proc.on("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  /** Resolves once the child printed `line`; fails if it exits first or takes too long. */
  async waitFor(line: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stdout.split("\n").includes(line)) {
      if (this.exit)
        throw new Error(
          `child exited (${JSON.stringify(this.exit)}) before "${line}"; stderr:\n${this.stderr}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `child did not print "${line}" within ${timeoutMs} ms; stderr:\n${this.stderr}`,
        );
      await sleep(2);
    }
  }

  go(): void {
    this.proc.stdin!.write("go\n");
  }

  async kill(): Promise<Exit> {
    this.proc.kill("SIGKILL");
    return this.exited;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The engine's error-level log lines of every child, counted by message. */
function engineErrors(stderr: string, into: Map<string, number>) {
  for (const line of stderr.split("\n")) {
    if (!line.trim()) continue;
    let key = line.slice(0, 200);
    try {
      const parsed = JSON.parse(line) as { level?: string; message?: string; error?: string };
      if (parsed.level !== "error") continue;
      key = `${parsed.message}: ${String(parsed.error ?? "").slice(0, 160)}`;
    } catch {
      // not one of the runtime's JSON lines (e.g. a Node warning): keep it as it is
    }
    into.set(key, (into.get(key) ?? 0) + 1);
  }
}

describe("crash recovery (SIGKILL)", () => {
  const dir = mkdtempSync(join(tmpdir(), "oc-crash-"));
  const children: Child[] = [];
  afterAll(async () => {
    for (const c of children) c.proc.kill("SIGKILL");
    await Promise.all(children.map((c) => c.exited));
    if (process.env.CRASH_KEEP === "1") console.log(`crash test files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });

  it(
    `keeps every invariant across ${KILLS} kills of the runtime process`,
    async () => {
      const dbPath = join(dir, "runtime.db");
      const projectDir = join(dir, "project");
      const logPath = join(dir, "side-effects.log");
      mkdirSync(join(projectDir, "opencomputer", "scripts"), { recursive: true });
      writeFileSync(
        join(projectDir, "opencomputer", "scripts", `${SCRIPT_NAME}.json`),
        JSON.stringify(buildScript()),
      );
      writeFileSync(logPath, "");
      const random = mulberry32(SEED);
      const started = Date.now();
      const errors = new Map<string, number>();
      const spawnChild = (mode: "load" | "drain") => {
        const child = new Child([
          dbPath,
          projectDir,
          logPath,
          mode,
          String(Math.floor(random() * 2 ** 31)),
        ]);
        children.push(child);
        return child;
      };

      // Children load their modules (Node + tsx take most of a second) while earlier ones run, so
      // a kill is followed by a takeover within milliseconds. Only one of them runs at a time.
      const spares: Child[] = [];
      let spawned = 0;
      const refill = () => {
        while (spares.length < SPARES && spawned <= KILLS)
          spares.push(spawnChild(spawned++ === KILLS ? "drain" : "load"));
      };
      refill();
      let killedBeforeReady = 0;
      for (let i = 0; i < KILLS; i++) {
        const current = spares.shift()!;
        refill();
        await current.waitFor("loaded", 60_000);
        current.go();
        // Mostly kill while it works; sometimes while it opens the store and recovers.
        const early = random() < 0.15;
        if (early) killedBeforeReady++;
        else await current.waitFor("ready", 30_000);
        await sleep(early ? Math.floor(random() * 30) : 5 + Math.floor(random() * 395));
        const exit = await current.kill();
        engineErrors(current.stderr, errors);
        // A child that died by itself (not our SIGKILL) is a crash of the engine, not a test kill.
        expect(exit, `child ${i} exited by itself; stderr:\n${current.stderr}`).toEqual({
          code: null,
          signal: "SIGKILL",
        });
      }
      const killPhaseMs = Date.now() - started;

      const drain = spares.shift()!;
      await drain.waitFor("loaded", 60_000);
      drain.go();
      const drained = await Promise.race([
        drain.exited,
        sleep(80_000).then(() => ({ code: -1, signal: null }) as Exit),
      ]);
      engineErrors(drain.stderr, errors);
      expect(
        drained,
        `the last runtime did not settle every turn; stdout:\n${drain.stdout}\nstderr:\n${drain.stderr}`,
      ).toEqual({
        code: 0,
        signal: null,
      });

      const store = createSqliteStore({ path: dbPath });
      let result: ReturnType<typeof checkInvariants>;
      try {
        result = checkInvariants(await readSnapshots(store), readFileSync(logPath, "utf8"));
      } finally {
        await store.close();
      }
      const { violations, stats } = result;
      const completed = stats.turnsByStatus.completed ?? 0;
      console.log(
        `crash: seed=${SEED} kills=${KILLS} (${killedBeforeReady} before ready) sessions=${stats.sessions} turns=${stats.turns} ` +
          `${JSON.stringify(stats.turnsByStatus)} resumedTurns=${stats.resumedTurns} disconnected=${stats.disconnected} ` +
          `calls=${stats.calls} restartedCalls=${stats.restartedCalls} reRunCalls=${stats.reRunCalls} ` +
          `sideEffects=${stats.sideEffects} results=${stats.results} killPhase=${killPhaseMs}ms total=${Date.now() - started}ms` +
          (Object.keys(stats.failedTurnErrors).length
            ? ` failedBy=${JSON.stringify(stats.failedTurnErrors)}`
            : "") +
          (errors.size ? `\n  engine log: ${JSON.stringify(Object.fromEntries(errors))}` : ""),
      );

      expect(violations.slice(0, 50), `${violations.length} violations (seed ${SEED})`).toEqual([]);
      expect(stats.turns).toBeGreaterThan(0);
      expect(completed / stats.turns, "most turns complete").toBeGreaterThan(0.5);
      expect(stats.disconnected, "some kills landed mid-turn").toBeGreaterThan(0);
    },
    KILLS * 3_000 + 120_000,
  );
});
