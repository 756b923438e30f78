// A runtime process for delegation-kill.test.ts. `run` starts a parent session whose agent
// delegates to a researcher, and SIGKILLs itself at one named step of the delegation (the store
// write that records the step, before or after it commits). `recover` starts a runtime on the
// same store, which picks up what the killed one left, and prints a summary once the parent's
// turn settled.
//
//   node --import tsx delegation-child.ts <dbPath> <projectDir> run <killPoint>|recover

import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { defineTool, useModel, useSubagent, useTool } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { createRuntime, createStaticAgents, type Store, type WriteBatch } from "../../src/index.ts";

const [dbPath, projectDir, mode, killPoint = ""] = process.argv.slice(2);
if (!dbPath || !projectDir || (mode !== "run" && mode !== "recover")) {
  console.error("usage: delegation-child.ts <dbPath> <projectDir> run <point>|recover");
  process.exit(64);
}
const sideEffects = join(projectDir, "side-effects.log");

/** Where a delegation can be cut: the write that records the step, and whether it committed. */
export const KILL_POINTS = {
  "parent-call-started": { child: false, event: "tool.started", after: true },
  "child-created": { child: true, event: "session.created", after: true },
  "child-task-received": { child: true, event: "message.received", after: true },
  "subagent-started": { child: false, event: "subagent.started", after: true },
  "child-tool-ran": { child: true, event: "tool.completed", after: true },
  "child-answered": { child: true, event: "turn.completed", after: true },
  "parent-commit-cut": { child: false, event: "subagent.completed", after: false },
  "parent-committed": { child: false, event: "subagent.completed", after: true },
} as const;

const note = defineTool({
  name: "note",
  description: "Record a finding",
  input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  run: ({ input, sessionId, toolCallId }) => {
    appendFileSync(sideEffects, `${sessionId}:${toolCallId}\n`);
    return { noted: String(input.text) };
  },
});

const agents = createStaticAgents({
  projectDir,
  agents: {
    planner() {
      useModel("script/planner");
      useSubagent("researcher");
      return "Delegate the research, then plan.";
    },
    researcher() {
      useModel("script/researcher");
      useTool(note);
      return "Research and answer concisely.";
    },
  },
});

const point = KILL_POINTS[killPoint as keyof typeof KILL_POINTS];
const store = createSqliteStore({ path: dbPath });
const runtime = createRuntime({
  store: point ? killing(store, point) : store,
  agents,
  models: createModelResolver({ providers: { script: createScriptModel }, override: undefined }),
  leaseMs: 300,
  recoveryIntervalMs: 40,
  log: {
    error: (message, fields) => console.error(JSON.stringify({ message, ...fields })),
    warn: () => {},
  },
});
setTimeout(() => process.exit(3), 30_000).unref();
await runtime.start();

if (mode === "run") {
  const { session } = await runtime.sessions.create({ agentId: "planner", idempotencyKey: "p" });
  await runtime.sessions.sendTurn(session.id, { text: "plan the launch" });
  // The kill point ends this process; reaching the end of the turn means it was never met.
  const [turn] = await store.listTurns(session.id);
  await runtime.sessions.waitForTurn(session.id, turn!.id, { timeoutMs: 20_000 });
  console.log(JSON.stringify({ unreached: killPoint }));
  process.exit(5);
} else {
  const [parent] = await store.listSessions({ agentId: "planner", limit: 10 });
  const [turn] = await store.listTurns(parent!.id);
  const settled = await runtime.sessions.waitForTurn(parent!.id, turn!.id, { timeoutMs: 20_000 });
  // The child's turns settle too (nothing else would wait for them).
  for (const child of await store.listSessions({ agentId: "researcher", limit: 10 })) {
    for (const t of await store.listTurns(child.id)) {
      await runtime.sessions.waitForTurn(child.id, t.id, { timeoutMs: 20_000 });
    }
  }
  console.log(JSON.stringify({ parentId: parent!.id, status: settled.status }));
  await runtime.close();
  await store.close();
  process.exit(0);
}

/** The store, except that the write recording `point` kills this process before or after it. */
function killing(inner: Store, p: (typeof KILL_POINTS)[keyof typeof KILL_POINTS]): Store {
  const die = () => process.kill(process.pid, "SIGKILL");
  const matches = (sessionId: string, events: WriteBatch["events"]) =>
    sessionId.startsWith("ses_sub_") === p.child && events.some((e) => e.type === p.event);
  const wrapped: Partial<Store> = {};
  wrapped.apply = async (sessionId, batch) => {
    const hit = matches(sessionId, batch.events);
    if (hit && !p.after) die();
    const out = await inner.apply(sessionId, batch);
    if (hit) die();
    return out;
  };
  wrapped.applyWithLease = async (sessionId, runtimeId, ttl, batch) => {
    const hit = matches(sessionId, batch.events);
    if (hit && !p.after) die();
    const out = await inner.applyWithLease(sessionId, runtimeId, ttl, batch);
    if (hit && out) die();
    return out;
  };
  wrapped.createSession = async (session, events) => {
    const out = await inner.createSession(session, events);
    if (matches(session.id, events)) die();
    return out;
  };
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(wrapped, key)) return wrapped[key as keyof Store];
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
