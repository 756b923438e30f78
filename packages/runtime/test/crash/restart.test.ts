// A runtime killed and restarted on the same SQLite file with the default timings (a 30 s
// lease): the restarted one sees that the holder of the stuck sessions died on this machine and
// resumes them at once instead of waiting out the lease (engine/dead-holders.ts). And a second
// runtime next to a live first one never takes its sessions. Real processes (child.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { Child, type Exit, sleep } from "./child-runner.ts";
import { checkInvariants, readSnapshots } from "./invariants.ts";
import { buildScript, SCRIPT_NAME } from "./scenario.ts";

const ENV = { ...process.env, CRASH_DEFAULT_TIMING: "1" };
const LEASE_MS = 30_000;

describe.runIf(process.platform === "linux")("restart on one machine (default 30 s lease)", () => {
  const dir = mkdtempSync(join(tmpdir(), "oc-restart-"));
  const children: Child[] = [];
  afterAll(async () => {
    for (const c of children) c.proc.kill("SIGKILL");
    await Promise.all(children.map((c) => c.exited));
    if (process.env.CRASH_KEEP !== "1") rmSync(dir, { recursive: true, force: true });
    else console.log(dir);
  });

  function setup(name: string) {
    const base = join(dir, name);
    const projectDir = join(base, "project");
    mkdirSync(join(projectDir, "opencomputer", "scripts"), { recursive: true });
    writeFileSync(
      join(projectDir, "opencomputer", "scripts", `${SCRIPT_NAME}.json`),
      JSON.stringify(buildScript()),
    );
    const logPath = join(base, "side-effects.log");
    writeFileSync(logPath, "");
    const dbPath = join(base, "runtime.db");
    const spawnChild = (mode: "load" | "drain") => {
      const child = new Child([dbPath, projectDir, logPath, mode, "7"], ENV);
      children.push(child);
      return child;
    };
    return { dbPath, logPath, spawnChild };
  }

  it("resumes a SIGKILLed runtime's turns at once, each completed once", async () => {
    const { dbPath, logPath, spawnChild } = setup("killed");
    const first = spawnChild("load");
    const second = spawnChild("drain");
    await first.waitFor("loaded", 60_000);
    first.go();
    await first.waitFor("ready", 30_000);
    await untilStuck(dbPath);
    const killed = await first.kill();
    expect(killed.signal).toBe("SIGKILL");
    const held = await withStore(dbPath, (store) => stuckSessions(store, Date.now()));
    // The premise: work is stuck behind live leases of the dead runtime.
    expect(held.length, "sessions with work under the dead runtime's live lease").toBeGreaterThan(
      0,
    );

    await second.waitFor("loaded", 60_000);
    second.go();
    const exit = await Promise.race([
      second.exited,
      sleep(LEASE_MS - 5_000).then((): Exit => ({ code: -1, signal: null })),
    ]);
    expect(
      exit,
      `restarted runtime did not settle every turn before the lease ran out:
${second.stdout}\n${second.stderr}`,
    ).toEqual({ code: 0, signal: null });
    const { startedAt } = startLine(second);

    const snapshots = await withStore(dbPath, readSnapshots);
    const { violations, stats } = checkInvariants(snapshots, readFileSync(logPath, "utf8"));
    expect(violations).toEqual([]);
    expect(stats.turnsByStatus.completed).toBe(stats.turns);
    // When the restarted runtime first started one of the stuck turns, from its start.
    const resumedAt = Math.min(
      ...snapshots
        .filter((s) => held.includes(s.session.id))
        .flatMap((s) => s.events)
        .filter((e) => e.type === "turn.started" && Date.parse(e.timestamp) >= startedAt)
        .map((e) => Date.parse(e.timestamp)),
    );
    const resumeMs = resumedAt - startedAt;
    console.log(
      `restart: ${held.length} sessions stuck under a 30 s lease; resumed ${resumeMs} ms after ` +
        `the restarted runtime's start; all ${stats.turns} turns done ${JSON.parse(lastLine(second)).ms} ms after it was ready`,
    );
    expect(resumeMs).toBeLessThan(5_000);
  }, 90_000);

  it("never takes a live runtime's sessions", async () => {
    const { dbPath, spawnChild } = setup("alive");
    const first = spawnChild("load");
    const second = spawnChild("drain");
    await first.waitFor("loaded", 60_000);
    first.go();
    await first.waitFor("ready", 30_000);
    const firstId = startLine(first).runtimeId;
    const held = await untilStuck(dbPath);
    expect(held.length).toBeGreaterThan(0);
    await second.waitFor("loaded", 60_000);
    second.go();
    await second.waitFor("ready", 30_000);
    const secondId = startLine(second).runtimeId;
    await sleep(1_500);
    const after = await withStore(dbPath, readSnapshots);
    const taken = after.filter(
      (s) => held.includes(s.session.id) && s.session.lease?.runtimeId === secondId,
    );
    const requeuedBySecond = after
      .flatMap((s) => s.events)
      .filter((e) => e.type === "runtime.disconnected")
      .filter((e) => (e.data as { runtimeId?: string }).runtimeId === secondId);
    expect(taken.map((s) => s.session.id)).toEqual([]);
    expect(requeuedBySecond).toEqual([]);
    // The first runtime is alive and still the holder of live work.
    expect(first.proc.exitCode).toBeNull();
    expect(after.some((s) => s.session.lease?.runtimeId === firstId)).toBe(true);
  }, 90_000);
});

/** Sessions with queued or running turns whose lease is live at `now`. */
async function stuckSessions(store: Store, now: number): Promise<string[]> {
  const out: string[] = [];
  for (const s of await store.listSessions({ limit: 100_000 })) {
    if (!s.lease || s.lease.expiresAt <= now) continue;
    if ((await store.listActiveTurns(s.id)).length > 0) out.push(s.id);
  }
  return out;
}

/** Waits until some session has work under a live lease: the moment to kill its holder. */
async function untilStuck(dbPath: string): Promise<string[]> {
  for (;;) {
    const held = await withStore(dbPath, (store) => stuckSessions(store, Date.now()));
    if (held.length > 0) return held;
    await sleep(10);
  }
}

async function withStore<T>(path: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = createSqliteStore({ path });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The child's `{ runtimeId, startedAt }` line, printed just before `ready`. */
function startLine(child: Child): { runtimeId: string; startedAt: number } {
  const line = child.stdout.split("\n").find((l) => l.startsWith('{"runtimeId"'));
  if (!line) throw new Error(`no start line in:\n${child.stdout}`);
  return JSON.parse(line);
}

function lastLine(child: Child): string {
  return child.stdout.trim().split("\n").at(-1) ?? "{}";
}
