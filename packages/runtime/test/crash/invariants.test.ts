// The crash test is only as good as its checker: a clean run must pass it, and each kind of
// damage a crash could do to the store or the side effects must be reported.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventRecord } from "../../src/index.ts";
import { createRuntime, createStaticAgents } from "../../src/index.ts";
import { createCrashAgent } from "./crash-agent.ts";
import { checkInvariants, readSnapshots, type SessionSnapshot } from "./invariants.ts";
import { AGENT_ID, buildScript, SCRIPT_NAME } from "./scenario.ts";

const silent = { error: () => {}, warn: () => {} };

describe("crash invariants checker", () => {
  const dir = mkdtempSync(join(tmpdir(), "oc-crash-check-"));
  let clean: SessionSnapshot[];
  let log: string;

  beforeAll(async () => {
    const logPath = join(dir, "side-effects.log");
    mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
    writeFileSync(
      join(dir, "opencomputer", "scripts", `${SCRIPT_NAME}.json`),
      JSON.stringify(buildScript()),
    );
    writeFileSync(logPath, "");
    const store = createSqliteStore({ path: ":memory:" });
    const runtime = createRuntime({
      store,
      agents: createStaticAgents({
        projectDir: dir,
        agents: { [AGENT_ID]: createCrashAgent(logPath) },
      }),
      models: createModelResolver({
        providers: { script: createScriptModel },
        override: undefined,
      }),
      log: silent,
    });
    await runtime.start();
    const { session } = await runtime.sessions.create({ agentId: AGENT_ID });
    await runtime.sessions.create({ agentId: AGENT_ID }); // one with no turns
    const first = await runtime.sessions.sendTurn(session.id, { text: "one" });
    const second = await runtime.sessions.sendTurn(session.id, { text: "two" });
    await runtime.sessions.waitForTurn(session.id, first.turnId, { timeoutMs: 10_000 });
    await runtime.sessions.waitForTurn(session.id, second.turnId, { timeoutMs: 10_000 });
    await runtime.close();
    clean = await readSnapshots(store);
    await store.close();
    log = readFileSync(logPath, "utf8");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The session that ran the two turns, copied so each case damages its own. */
  const busy = () => {
    const copy = structuredClone(clean);
    return { all: copy, snap: copy.find((s) => s.turns.length > 0)! };
  };
  const completions = (snap: SessionSnapshot) =>
    snap.events.filter((e) => e.type === "tool.completed");
  const append = (
    snap: SessionSnapshot,
    event: Omit<EventRecord, "seq" | "sessionId" | "id" | "timestamp">,
  ) => {
    const seq = snap.session.lastSeq + 1;
    snap.events.push({
      ...event,
      seq,
      sessionId: snap.session.id,
      id: `evt_${seq}`,
      timestamp: new Date().toISOString(),
    } as EventRecord);
    snap.session.lastSeq = seq;
  };
  const violationsOf = (snaps: SessionSnapshot[], sideEffects = log) =>
    checkInvariants(snaps, sideEffects).violations;

  it("passes a clean run", () => {
    const { violations, stats } = checkInvariants(clean, log);
    expect(violations).toEqual([]);
    expect(stats.turnsByStatus).toEqual({ completed: 2 });
    expect(stats.results).toBe(2);
    expect(stats.calls).toBe(12);
  });

  it("reports a gap in the seqs", () => {
    const { all, snap } = busy();
    snap.events.splice(5, 1);
    expect(violationsOf(all).join("\n")).toMatch(/gap or duplicate/);
  });

  it("reports a call completed twice, or failed after completing", () => {
    const twice = busy();
    const done = completions(twice.snap)[0]!;
    append(twice.snap, { type: "tool.completed", turnId: done.turnId, data: done.data });
    expect(violationsOf(twice.all).join("\n")).toMatch(/completed 2 times/);

    const failedAfter = busy();
    const done2 = completions(failedAfter.snap)[0]!;
    append(failedAfter.snap, {
      type: "tool.failed",
      turnId: done2.turnId,
      data: { ...(done2.data as object), message: "x" },
    });
    expect(violationsOf(failedAfter.all).join("\n")).toMatch(/failed after it completed/);
  });

  it("reports a result without its record, and a stale session.result", () => {
    const missing = busy();
    missing.snap.results.shift();
    expect(violationsOf(missing.all).join("\n")).toMatch(/result completions but 1 result records/);

    const stale = busy();
    const firstRecord = stale.snap.results[0]!;
    stale.snap.session.result = {
      turnId: firstRecord.turnId,
      callId: firstRecord.toolCallId,
      reportedAt: firstRecord.createdAt,
      data: firstRecord.data,
    };
    expect(violationsOf(stale.all).join("\n")).toMatch(/is not the latest record/);
  });

  it("reports an unsettled turn and a write after the terminal event", () => {
    const running = busy();
    running.snap.turns[1]!.status = "running";
    expect(violationsOf(running.all).join("\n")).toMatch(/is running, not settled/);

    const late = busy();
    append(late.snap, { type: "agent.rendered", turnId: late.snap.turns[0]!.id, data: {} });
    expect(violationsOf(late.all).join("\n")).toMatch(/written after the turn settled/);
  });

  it("reports a completed call whose side effect is missing, or that ran more often than it started", () => {
    const lines = log.trim().split("\n");
    expect(violationsOf(clean, lines.slice(1).join("\n")).join("\n")).toMatch(
      /has no side effect in the log/,
    );
    expect(violationsOf(clean, `${log}${lines[0]}\n`).join("\n")).toMatch(
      /ran 2 times but the call was started 1 times/,
    );
  });
});
