// A runtime process for the crash test, killed with SIGKILL at a random moment by the parent.
//
//   node --import tsx child.ts <dbPath> <projectDir> <sideEffectLog> load|drain [seed]
//
// It loads its modules, prints `loaded` and waits for a `go` line on stdin before it touches the
// store, so the parent can warm the next child up while the current one runs.
// `load`: recovers what earlier (killed) children left, then keeps creating sessions and
// sending turns until it is killed. `drain`: recovers and creates nothing; exits 0 once every
// turn in the store has settled (2 on timeout). It writes to the store only through the runtime.

import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { createRuntime, createStaticAgents, type Logger } from "../../src/index.ts";
import { createCrashAgent } from "./crash-agent.ts";
import { AGENT_ID, MAX_TURNS_PER_SESSION } from "./scenario.ts";

const [dbPath, projectDir, logPath, mode = "load", seedArg] = process.argv.slice(2);
if (!dbPath || !projectDir || !logPath || (mode !== "load" && mode !== "drain")) {
  console.error("usage: child.ts <dbPath> <projectDir> <sideEffectLog> load|drain [seed]");
  process.exit(64);
}

const random = mulberry32(Number(seedArg ?? Date.now()) >>> 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Logged as JSON lines on stderr; the parent collects them and reports engine errors.
const log: Logger = {
  error: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: "error", message, ...fields })}\n`),
  warn: (message, fields) =>
    process.stderr.write(`${JSON.stringify({ level: "warn", message, ...fields })}\n`),
};

// Defining the tools checks their schemas (~100 ms): part of warming up, before the store is touched.
const agents = createStaticAgents({
  projectDir,
  agents: { [AGENT_ID]: createCrashAgent(logPath) },
});
const models = createModelResolver({
  providers: { script: createScriptModel },
  override: undefined,
});

// A child the parent forgot to kill must not outlive the test.
setTimeout(() => process.exit(3), mode === "drain" ? 120_000 : 60_000).unref();
process.stdout.write("loaded\n");
await waitForGo();

const store = createSqliteStore({ path: dbPath });
// Short, so the next child takes over a killed child's sessions quickly; CRASH_DEFAULT_TIMING=1
// keeps the runtime's defaults (a 30 s lease), as `opencomputer dev` and `server` run.
const timing =
  process.env.CRASH_DEFAULT_TIMING === "1" ? {} : { leaseMs: 300, recoveryIntervalMs: 40 };
const runtime = createRuntime({ store, agents, models, ...timing, log });

const startedAt = Date.now();
await runtime.start();
process.stdout.write(`${JSON.stringify({ runtimeId: runtime.runtimeId, startedAt })}\n`);
process.stdout.write("ready\n");

if (mode === "drain") await drain();
else await load();

async function load(): Promise<never> {
  const newSessions = 3 + Math.floor(random() * 5);
  let created = 0;
  for (;;) {
    if (created < newSessions) {
      created++;
      const { session } = await runtime.sessions.create({ agentId: AGENT_ID });
      const turns = 1 + Math.floor(random() * 2);
      for (let t = 0; t < turns; t++) {
        await runtime.sessions.sendTurn(session.id, { text: `new session, turn ${t}` });
      }
    }
    if (random() < 0.35) await addTurnToOldSession();
    await sleep(15 + Math.floor(random() * 30));
  }
}

/** Queues a turn on a session an earlier child created, whichever runtime holds it now. */
async function addTurnToOldSession() {
  const sessions = await store.listSessions({ agentId: AGENT_ID, limit: 10_000 });
  if (sessions.length === 0) return;
  const session = sessions[Math.floor(random() * sessions.length)]!;
  if ((await store.listTurns(session.id)).length >= MAX_TURNS_PER_SESSION) return;
  await runtime.sessions.sendTurn(session.id, { text: "a later turn" });
}

async function drain(): Promise<void> {
  const started = Date.now();
  for (;;) {
    const open: string[] = [];
    for (const session of await store.listSessions({ limit: 100_000 })) {
      for (const turn of await store.listTurns(session.id)) {
        if (turn.status === "queued" || turn.status === "running")
          open.push(`${session.id}/${turn.id}:${turn.status}`);
      }
    }
    if (open.length === 0) break;
    if (Date.now() - started > 60_000) {
      process.stdout.write(
        `${JSON.stringify({ drained: false, open: open.slice(0, 20), openCount: open.length })}\n`,
      );
      process.exit(2);
    }
    await sleep(50);
  }
  await runtime.close();
  await store.close();
  process.stdout.write(`${JSON.stringify({ drained: true, ms: Date.now() - started })}\n`);
  process.exit(0);
}

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    let buffered = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk: string) => {
      buffered += chunk;
      if (buffered.includes("go\n")) resolve();
    });
    // The parent went away: nobody will kill or read this child.
    process.stdin.on("end", () => process.exit(4));
  });
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
