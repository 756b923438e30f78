// The takeover half of the cluster benchmark: N runtime processes on one PostgreSQL database;
// the first starts `sessions` turns of the cluster fixture (two steps of OC_STEP_MS each), is
// SIGKILLed while they run, and the others take them over. Measured from the store's own event
// timestamps (every process and this one share the machine's clock): how long after the kill
// each session's `runtime.disconnected` (the survivor's claim) and its settled turn were
// written, and how long one undisturbed turn takes.
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { ChildStart, ChildStarted } from "./cluster-child.ts";
import { percentile } from "./stats.ts";

export interface TakeoverResult {
  sessions: number;
  /** Runtime ids without an incarnation: the dead one's leases had to expire. */
  remote: boolean;
  /** The killed process's turns, each ms after the kill: resumed elsewhere / settled. */
  resumeP50Ms: number;
  resumeP90Ms: number;
  finishP90Ms: number;
  /** One undisturbed turn of the same agent, ms. */
  normalTurnMs: number;
  /** Turns that did not complete (failed, cancelled, or not settled within the timeout). */
  lost: number;
}

const CHILD = fileURLToPath(new URL("./cluster-child.ts", import.meta.url));
const STEP_MS = 1000;

function startChild(url: string, remote: boolean): Promise<ChildProcess> {
  const child = fork(CHILD, remote ? [url, "takeover", "remote"] : [url, "takeover"], {
    execArgv: ["--import", "tsx"],
    stdio: "inherit",
    env: { ...process.env, OC_STEP_MS: String(STEP_MS) },
  });
  return new Promise((resolve, reject) => {
    child.once("message", (m) => (m === "ready" ? resolve(child) : reject(new Error(String(m)))));
    child.once("exit", (code) => reject(new Error(`takeover child exited ${code}`)));
  });
}

interface Marks {
  resumed?: number;
  settled?: number;
  completed: boolean;
}

async function readMarks(db: pg.Client, sessionIds: string[]): Promise<Map<string, Marks>> {
  const { rows } = await db.query<{ session_id: string; type: string; timestamp: string }>(
    `SELECT session_id, type, timestamp FROM events WHERE session_id = ANY($1)
       AND type IN ('runtime.disconnected', 'turn.completed', 'turn.failed', 'turn.cancelled')`,
    [sessionIds],
  );
  const marks = new Map<string, Marks>(sessionIds.map((id) => [id, { completed: false }]));
  for (const row of rows) {
    const mark = marks.get(row.session_id)!;
    const at = Date.parse(row.timestamp);
    if (row.type === "runtime.disconnected") mark.resumed ??= at;
    else {
      mark.settled = at;
      mark.completed = row.type === "turn.completed";
    }
  }
  return marks;
}

/** Runs one takeover on `url` with `processes` runtimes (at least 2). */
export async function benchTakeover(
  url: string,
  processes: number,
  sessions = 50,
  /** Runtime ids that cannot be judged dead from /proc, as on separate machines. */
  remote = false,
): Promise<TakeoverResult> {
  const children: ChildProcess[] = [];
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    for (let i = 0; i < processes; i++) children.push(await startChild(url, remote));
    const victim = children[0]!;
    const started = await new Promise<ChildStarted>((resolve) => {
      victim.once("message", (m) => resolve(m as ChildStarted));
      victim.send({ start: sessions } satisfies ChildStart);
    });
    // Mid-way through every turn's first step.
    await new Promise((resolve) => setTimeout(resolve, STEP_MS / 3));
    const exited = new Promise((resolve) => victim.once("exit", resolve));
    victim.kill("SIGKILL");
    const killedAt = Date.now();
    await exited;
    let marks = await readMarks(db, started.sessionIds);
    const deadline = killedAt + 120_000;
    while ([...marks.values()].some((m) => m.settled === undefined) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      marks = await readMarks(db, started.sessionIds);
    }
    const after = (pick: (m: Marks) => number | undefined) =>
      Float64Array.from(
        [...marks.values()].map((m) => (pick(m) ?? Number.POSITIVE_INFINITY) - killedAt),
      ).sort();
    const resumed = after((m) => m.resumed);
    const settled = after((m) => m.settled);
    return {
      sessions,
      remote,
      resumeP50Ms: percentile(resumed, 50),
      resumeP90Ms: percentile(resumed, 90),
      finishP90Ms: percentile(settled, 90),
      normalTurnMs: started.normalTurnMs,
      lost: [...marks.values()].filter((m) => !m.completed).length,
    };
  } finally {
    await db.end();
    await Promise.all(
      children.slice(1).map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.send("close");
          }),
      ),
    );
  }
}
