// Crash recovery under SIGKILL: runtime processes (child.ts) on one SQLite file are killed at
// random moments (inside model calls, tool calls, commits, recovery) and replaced; a last one runs
// every turn to its end. Whatever the kill points, the store must then satisfy the invariants in
// invariants.ts. Some children are frozen (SIGSTOP) instead and woken next to their successor
// before being killed, which exercises lease fencing with two live runtimes.
//
// Environment: CRASH_KILLS (default 50), CRASH_PAUSE_RATE (share frozen first, default 0.15; 0 for
// plain kills), CRASH_SEED (the parent's random choices; timing still varies), CRASH_KEEP=1 keeps
// the temp dir (database, side-effect log) for inspection.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { Child, type Exit, sleep } from "./child-runner.ts";
import { checkInvariants, readSnapshots } from "./invariants.ts";
import { buildScript, SCRIPT_NAME } from "./scenario.ts";

const KILLS = Math.max(1, Number(process.env.CRASH_KILLS ?? 50));
/** Children loading ahead of the one running. */
const SPARES = 2;
/** Share of children frozen (SIGSTOP) instead of killed, then woken next to their successor. */
const PAUSE_RATE = Number(process.env.CRASH_PAUSE_RATE ?? 0.15);
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Sorts a child's stderr: the runtime's error-level log lines (JSON, counted by message) and
 * anything that is not a runtime log line at all (a Node warning, an uncaught exception).
 */
function collectStderr(stderr: string, errors: Map<string, number>, other: string[]) {
  for (const line of stderr.split("\n")) {
    if (!line.trim()) continue;
    let parsed: { level?: string; message?: string; error?: string } | null = null;
    try {
      parsed = JSON.parse(line);
    } catch {
      other.push(line.slice(0, 300));
      continue;
    }
    if (parsed?.level !== "error") continue;
    const key = `${parsed.message}: ${String(parsed.error ?? "").slice(0, 200)}`;
    errors.set(key, (errors.get(key) ?? 0) + 1);
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
      const otherStderr: string[] = [];
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
      // a kill is followed by a takeover within milliseconds. One runs at a time, plus a frozen
      // one while it is woken up.
      const spares: Child[] = [];
      let spawned = 0;
      const refill = () => {
        while (spares.length < SPARES && spawned <= KILLS)
          spares.push(spawnChild(spawned++ === KILLS ? "drain" : "load"));
      };
      refill();
      let killedBeforeReady = 0;
      let paused = 0;
      const zombies: Promise<void>[] = [];
      const diedByThemselves: string[] = [];
      const settleChild = async (child: Child, name: string) => {
        const exit = await child.kill();
        collectStderr(child.stderr, errors, otherStderr);
        // A child that died by itself (not our SIGKILL) is a crash of the engine, not a test kill.
        if (exit.signal !== "SIGKILL")
          diedByThemselves.push(`${name}: ${JSON.stringify(exit)}\n${child.stderr}`);
      };
      let waitedForLoadMs = 0;
      for (let i = 0; i < KILLS; i++) {
        const current = spares.shift()!;
        refill();
        const waitStart = Date.now();
        await current.waitFor("loaded", 60_000);
        waitedForLoadMs += Date.now() - waitStart;
        current.go();
        // Mostly kill while it works; sometimes while it opens the store and recovers.
        const early = random() < 0.15;
        if (early) killedBeforeReady++;
        else await current.waitFor("ready", 30_000);
        await sleep(early ? Math.floor(random() * 30) : 5 + Math.floor(random() * 395));
        if (!early && random() < PAUSE_RATE) {
          // Frozen rather than dead: the next child takes its sessions over once their leases
          // expire, then this one wakes up with its old leases and in-flight work (a GC pause, a
          // VM migration) and must be fenced off (invariant 2) until it is killed for good.
          current.proc.kill("SIGSTOP");
          paused++;
          const frozenMs = 350 + Math.floor(random() * 550);
          const awakeMs = 20 + Math.floor(random() * 300);
          zombies.push(
            (async () => {
              await sleep(frozenMs);
              current.proc.kill("SIGCONT");
              await sleep(awakeMs);
              await settleChild(current, `paused child ${i}`);
            })(),
          );
        } else {
          await settleChild(current, `child ${i}`);
        }
      }
      await Promise.all(zombies);
      expect(diedByThemselves, "children that exited by themselves (engine crash)").toEqual([]);
      const killPhaseMs = Date.now() - started;

      const drain = spares.shift()!;
      await drain.waitFor("loaded", 60_000);
      drain.go();
      const drained = await Promise.race([
        drain.exited,
        sleep(80_000).then(() => ({ code: -1, signal: null }) as Exit),
      ]);
      collectStderr(drain.stderr, errors, otherStderr);
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
      const failedBy = Object.keys(stats.failedTurnErrors).length
        ? ` failedBy=${JSON.stringify(stats.failedTurnErrors)}`
        : "";
      console.log(
        `crash: kills=${KILLS} (${killedBeforeReady} before ready, ${paused} frozen and woken first; ${stats.killedDuring.toolCalls} requeues in tool calls, ` +
          `${stats.killedDuring.modelStep} in model steps) sessions=${stats.sessions} turns=${stats.turns} ` +
          `completed=${completed}${failedBy} resumedTurns=${stats.resumedTurns} disconnected=${stats.disconnected} ` +
          `calls=${stats.calls} restartedCalls=${stats.restartedCalls} reRunCalls=${stats.reRunCalls} ` +
          `sideEffects=${stats.sideEffects} results=${stats.results} seed=${SEED} ` +
          `time=${Date.now() - started}ms (kills ${killPhaseMs}ms, of which ${waitedForLoadMs}ms waiting for a child to load)` +
          (errors.size ? `\n  engine errors: ${JSON.stringify(Object.fromEntries(errors))}` : "") +
          (otherStderr.length
            ? `\n  other stderr: ${JSON.stringify(otherStderr.slice(0, 10))}`
            : "") +
          (stats.malformedLogLines
            ? `\n  malformed side-effect log lines: ${stats.malformedLogLines}`
            : ""),
      );

      expect(violations.slice(0, 50), `${violations.length} violations (seed ${SEED})`).toEqual([]);
      expect(stats.turns).toBeGreaterThan(0);
      expect(completed / stats.turns, "most turns complete").toBeGreaterThan(0.5);
      // Nothing here can fail a turn except the engine itself: a kill must never become one.
      expect(stats.failedTurnErrors.runtime_failed ?? 0, "turns failed with runtime_failed").toBe(
        0,
      );
      expect(Object.fromEntries(errors), "error-level log lines from the runtimes").toEqual({});
      expect(stats.disconnected, "some kills landed mid-turn").toBeGreaterThan(0);
    },
    KILLS * 3_000 + 120_000,
  );
});
