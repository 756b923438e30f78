// What must hold in the store after any sequence of SIGKILLs, once every turn has settled: the
// durable log is gapless and tells one consistent story per turn and per tool call, results are
// committed exactly once with their event, and the side effects tools performed are explained by
// the log (at least once per completed call, never more often than the call was started).
import { isDeepStrictEqual } from "node:util";
import type {
  EventRecord,
  MessageRecord,
  ResultRecord,
  SessionRecord,
  Store,
  ToolCallRecord,
  TurnRecord,
} from "../../src/index.ts";
import { type ReportInput, reportValue, SIDE_EFFECT_LINE, sideEffectKey } from "./scenario.ts";

export interface SessionSnapshot {
  session: SessionRecord;
  turns: TurnRecord[];
  messages: MessageRecord[];
  toolCalls: ToolCallRecord[];
  results: ResultRecord[];
  /** getResultByCall for every result-tool completion in the log. */
  resultsByCall: Map<string, ResultRecord | undefined>;
  events: EventRecord[];
}

export async function readSnapshots(store: Store): Promise<SessionSnapshot[]> {
  const out: SessionSnapshot[] = [];
  for (const session of await store.listSessions({ limit: 1_000_000 })) {
    const id = session.id;
    const events = await store.readEvents(id, 0, 1_000_000);
    const resultsByCall = new Map<string, ResultRecord | undefined>();
    for (const e of events) {
      const data = e.data as { callId?: string; result?: unknown };
      if (e.type === "tool.completed" && data.result === true && data.callId) {
        resultsByCall.set(data.callId, await store.getResultByCall(id, data.callId));
      }
    }
    out.push({
      session,
      turns: await store.listTurns(id),
      messages: await store.listMessages(id),
      toolCalls: await store.listToolCalls(id),
      results: await store.listResults(id, { limit: 1_000_000 }),
      resultsByCall,
      events,
    });
  }
  return out;
}

export interface Stats {
  sessions: number;
  turns: number;
  turnsByStatus: Record<string, number>;
  failedTurnErrors: Record<string, number>;
  disconnected: number;
  resumedTurns: number;
  calls: number;
  completedCalls: number;
  /** Calls started more than once (resumed after a kill). */
  restartedCalls: number;
  /** Calls whose side effect is in the log more than once. */
  reRunCalls: number;
  sideEffects: number;
  /** Log lines that are not a side-effect key (a torn write would show here). */
  malformedLogLines: number;
  results: number;
  /** Where the runtime was when it died, per requeue: inside tool calls, or before/in a model call. */
  killedDuring: { toolCalls: number; modelStep: number };
}

const TERMINAL_TURN = new Set(["turn.completed", "turn.failed", "turn.cancelled"]);
const SETTLED = new Set(["completed", "failed", "cancelled"]);

/**
 * Checks every snapshot and the side-effect log; returns the violations found (empty when all
 * hold) and counts for the summary. Violations are collected rather than thrown so one run shows
 * every broken invariant at once.
 */
export function checkInvariants(
  snapshots: SessionSnapshot[],
  sideEffectLog: string,
): { violations: string[]; stats: Stats } {
  const violations: string[] = [];
  const stats: Stats = {
    sessions: snapshots.length,
    turns: 0,
    turnsByStatus: {},
    failedTurnErrors: {},
    disconnected: 0,
    resumedTurns: 0,
    calls: 0,
    completedCalls: 0,
    restartedCalls: 0,
    reRunCalls: 0,
    sideEffects: 0,
    malformedLogLines: 0,
    results: 0,
    killedDuring: { toolCalls: 0, modelStep: 0 },
  };
  /** `${sessionId}:${callId}` → how often the call was durably started, and whether it completed. */
  const callRuns = new Map<string, { started: number; completed: boolean }>();

  for (const snap of snapshots) {
    const fail = (what: string) => violations.push(`${snap.session.id}: ${what}`);
    checkLog(snap, fail);
    stats.disconnected += snap.events.filter((e) => e.type === "runtime.disconnected").length;
    for (const turn of snap.turns) {
      stats.turns++;
      stats.turnsByStatus[turn.status] = (stats.turnsByStatus[turn.status] ?? 0) + 1;
      if (turn.status === "failed") {
        const code = turn.error?.code ?? "unknown";
        stats.failedTurnErrors[code] = (stats.failedTurnErrors[code] ?? 0) + 1;
      }
      if (checkTurn(snap, turn, fail, stats.killedDuring)) stats.resumedTurns++;
    }
    for (const [callId, info] of checkCalls(snap, fail)) {
      stats.calls++;
      if (info.completed) stats.completedCalls++;
      if (info.started > 1) stats.restartedCalls++;
      callRuns.set(sideEffectKey(snap.session.id, callId), info);
    }
    stats.results += snap.results.length;
    checkResults(snap, fail);
    checkMessages(snap, fail);
    const expected = snap.turns.length === 0 ? "new" : "idle";
    if (snap.session.status !== expected)
      fail(`session status is ${snap.session.status}, expected ${expected}`);
  }

  const runs = new Map<string, number>();
  for (const line of sideEffectLog.split("\n")) {
    if (line === "") continue;
    const match = SIDE_EFFECT_LINE.exec(line);
    if (!match) {
      stats.malformedLogLines++;
      continue;
    }
    stats.sideEffects++;
    const key = sideEffectKey(match[1]!, match[2]!);
    runs.set(key, (runs.get(key) ?? 0) + 1);
  }
  for (const [key, count] of runs) {
    const call = callRuns.get(key);
    if (!call) {
      violations.push(
        `side effect ${key} belongs to no tool call in the store (a tool ran without a durable tool.started)`,
      );
      continue;
    }
    if (count > call.started) {
      violations.push(
        `side effect ${key} ran ${count} times but the call was started ${call.started} times (a completed call ran again?)`,
      );
    }
    if (count > 1) stats.reRunCalls++;
  }
  for (const [key, call] of callRuns) {
    if (call.completed && !runs.has(key))
      violations.push(`completed call ${key} has no side effect in the log (at-least-once broken)`);
  }
  return { violations, stats };
}

/** Invariant 1: seqs are exactly 1..lastSeq, and the log starts with session.created. */
function checkLog(snap: SessionSnapshot, fail: (what: string) => void) {
  const { events, session } = snap;
  events.forEach((e, i) => {
    if (e.seq !== i + 1) fail(`event #${i} has seq ${e.seq}, expected ${i + 1} (gap or duplicate)`);
    if (e.sessionId !== session.id) fail(`event seq ${e.seq} belongs to session ${e.sessionId}`);
  });
  if (events.length !== session.lastSeq)
    fail(`${events.length} events but lastSeq is ${session.lastSeq}`);
  if (events[0]?.type !== "session.created")
    fail(`first event is ${events[0]?.type}, expected session.created`);
  if (events.filter((e) => e.type === "session.created").length !== 1)
    fail("session.created appears more than once");
}

/**
 * A turn's events must follow its state machine, whatever the kill points were:
 * received → queued → started → (disconnected + requeued → started{resumed})* → one terminal event,
 * with step and tool events only while running and nothing at all after the terminal event.
 * Returns whether the turn was resumed after a kill.
 */
function checkTurn(
  snap: SessionSnapshot,
  turn: TurnRecord,
  fail: (what: string) => void,
  killedDuring: Stats["killedDuring"],
): boolean {
  const at = `turn ${turn.id}`;
  if (!SETTLED.has(turn.status)) fail(`${at} is ${turn.status}, not settled`);
  const events = snap.events.filter((e) => e.turnId === turn.id);
  const bySeq = new Map(snap.events.map((e) => [e.seq, e]));
  let state: "new" | "received" | "queued" | "running" | "settled" = "new";
  let starts = 0;
  let requeues = 0;
  let terminal: EventRecord | undefined;
  const openCalls = new Set<string>();
  for (const e of events) {
    const data = (e.data ?? {}) as Record<string, unknown>;
    const bad = () => fail(`${at}: ${e.type} (seq ${e.seq}) while ${state}`);
    if (state === "settled") {
      fail(`${at}: ${e.type} (seq ${e.seq}) written after the turn settled (seq ${terminal?.seq})`);
      continue;
    }
    switch (e.type) {
      case "message.received":
        if (state !== "new") bad();
        state = "received";
        break;
      case "turn.queued":
        if (data.requeued === true) {
          if (state !== "running") bad();
          const before = bySeq.get(e.seq - 1);
          const ids = (before?.data as { requeuedTurnIds?: unknown } | undefined)?.requeuedTurnIds;
          if (
            before?.type !== "runtime.disconnected" ||
            !Array.isArray(ids) ||
            !ids.includes(turn.id)
          ) {
            fail(`${at}: requeue at seq ${e.seq} is not preceded by its runtime.disconnected`);
          }
          requeues++;
          if (openCalls.size > 0) killedDuring.toolCalls++;
          else killedDuring.modelStep++;
        } else if (state !== "received") bad();
        state = "queued";
        break;
      case "turn.started":
        if (state !== "queued") bad();
        if (starts > 0 !== (data.resumed === true))
          fail(`${at}: turn.started #${starts + 1} has resumed=${String(data.resumed)}`);
        starts++;
        state = "running";
        break;
      default: {
        if (TERMINAL_TURN.has(e.type)) {
          if (state !== "running" && !(e.type === "turn.cancelled" && state === "queued")) bad();
          terminal = e;
          state = "settled";
        } else if (state !== "running") bad();
        const callId = (data as { callId?: string }).callId;
        if (callId && e.type === "tool.started") openCalls.add(callId);
        if (callId && (e.type === "tool.completed" || e.type === "tool.failed"))
          openCalls.delete(callId);
      }
    }
  }
  if (!terminal) fail(`${at} has no terminal event`);
  else if (terminal.type !== `turn.${turn.status}`)
    fail(`${at} is ${turn.status} but its terminal event is ${terminal.type}`);
  if (starts > 0 && starts !== requeues + 1)
    fail(`${at}: ${starts} starts for ${requeues} requeues`);

  const assistant = snap.messages.filter((m) => m.turnId === turn.id && m.role === "assistant");
  const user = snap.messages.filter((m) => m.turnId === turn.id && m.role === "user");
  if (starts > 0 && user.length !== 1) fail(`${at} has ${user.length} user messages, expected 1`);
  if (turn.steps !== assistant.length)
    fail(`${at} counts ${turn.steps} steps but has ${assistant.length} assistant messages`);
  const usage = events.filter((e) => e.type === "usage.recorded").length;
  if (usage !== assistant.length)
    fail(`${at} has ${usage} usage.recorded events for ${assistant.length} model steps`);
  return requeues > 0;
}

/**
 * Invariant 3, per call: started first (attempts counted up), exactly one outcome and it is the
 * call's last event; the call record agrees with its events.
 */
function checkCalls(snap: SessionSnapshot, fail: (what: string) => void) {
  const byCall = new Map<string, EventRecord[]>();
  for (const e of snap.events) {
    if (!e.type.startsWith("tool.")) continue;
    const callId = (e.data as { callId?: string }).callId;
    if (!callId) {
      fail(`${e.type} at seq ${e.seq} has no callId`);
      continue;
    }
    byCall.set(callId, [...(byCall.get(callId) ?? []), e]);
  }
  const records = new Map(snap.toolCalls.map((c) => [c.callId, c]));
  for (const c of snap.toolCalls)
    if (!byCall.has(c.callId)) fail(`call ${c.callId} has a record but no events`);

  const out = new Map<string, { started: number; completed: boolean }>();
  for (const [callId, events] of byCall) {
    const at = `call ${callId}`;
    const starts = events.filter((e) => e.type === "tool.started");
    const completed = events.filter((e) => e.type === "tool.completed");
    const failed = events.filter((e) => e.type === "tool.failed");
    if (events[0]?.type !== "tool.started") fail(`${at}: first event is ${events[0]?.type}`);
    starts.forEach((e, i) => {
      const attempt = (e.data as { attempt?: number }).attempt ?? 1;
      if (attempt !== i + 1)
        fail(`${at}: tool.started #${i + 1} (seq ${e.seq}) says attempt ${attempt}`);
    });
    if (completed.length > 1)
      fail(
        `${at} completed ${completed.length} times (seqs ${completed.map((e) => e.seq).join(", ")})`,
      );
    if (completed.length > 0 && failed.some((f) => f.seq > completed[0]!.seq))
      fail(`${at} failed after it completed`);
    if (completed.length + failed.length !== 1)
      fail(`${at} has ${completed.length} tool.completed and ${failed.length} tool.failed`);
    const last = events[events.length - 1]!;
    if (last.type !== "tool.completed" && last.type !== "tool.failed")
      fail(`${at}: last event is ${last.type} (seq ${last.seq})`);
    if (new Set(events.map((e) => e.turnId)).size !== 1)
      fail(`${at}: events name more than one turn`);

    const record = records.get(callId);
    if (!record) {
      fail(`${at} has events but no record`);
      continue;
    }
    if (record.turnId !== events[0]?.turnId)
      fail(`${at}: record turn ${record.turnId}, events turn ${events[0]?.turnId}`);
    if (record.attempts !== starts.length)
      fail(`${at}: record says ${record.attempts} attempts, log has ${starts.length} starts`);
    const expectedStatus =
      completed.length > 0 ? "completed" : failed.length > 0 ? "failed" : "started";
    if (record.status !== expectedStatus)
      fail(`${at}: record is ${record.status}, log says ${expectedStatus}`);
    const done = completed[0];
    if (done) {
      const output = (done.data as { output?: unknown }).output;
      if (!isDeepStrictEqual(record.output, output))
        fail(`${at}: record output differs from tool.completed output`);
      const expected = expectedOutput(record);
      if (expected !== undefined && !isDeepStrictEqual(output, expected)) {
        fail(
          `${at}: ${record.tool} output ${JSON.stringify(output)}, expected ${JSON.stringify(expected)}`,
        );
      }
    }
    out.set(callId, { started: starts.length, completed: done !== undefined });
  }
  return out;
}

function expectedOutput(call: ToolCallRecord): unknown {
  const input = call.input as Record<string, unknown>;
  if (call.tool === "note") return { noted: input.text };
  if (call.tool === "report") return reportValue(input as unknown as ReportInput);
  return undefined;
}

/** Every result-tool completion has exactly its record, and session.result is the latest one. */
function checkResults(snap: SessionSnapshot, fail: (what: string) => void) {
  const reported = snap.events.filter(
    (e) => e.type === "tool.completed" && (e.data as { result?: unknown }).result === true,
  );
  const byCall = new Map(snap.results.map((r) => [r.toolCallId, r]));
  if (byCall.size !== snap.results.length) fail("two result records share a toolCallId");
  if (reported.length !== snap.results.length)
    fail(`${reported.length} result completions but ${snap.results.length} result records`);
  for (const [i, e] of reported.entries()) {
    const { callId, output } = e.data as { callId: string; output: unknown };
    const record = byCall.get(callId);
    if (!record) {
      fail(`result call ${callId} (seq ${e.seq}) has no result record`);
      continue;
    }
    if (!isDeepStrictEqual(record.data, output))
      fail(`result record of ${callId} holds other data than its event`);
    if (record.turnId !== e.turnId)
      fail(`result record of ${callId} names turn ${record.turnId}, event ${e.turnId}`);
    if (snap.results[i]?.toolCallId !== callId)
      fail(`result records are not in the order of their events at #${i}`);
    if (!isDeepStrictEqual(snap.resultsByCall.get(callId), record))
      fail(`getResultByCall(${callId}) differs from its listResults record`);
  }
  const latest = snap.results[snap.results.length - 1];
  const result = snap.session.result;
  if (!latest) {
    if (result !== null) fail(`session.result is set without any result record`);
    return;
  }
  if (
    !result ||
    result.callId !== latest.toolCallId ||
    result.turnId !== latest.turnId ||
    result.reportedAt !== latest.createdAt ||
    !isDeepStrictEqual(result.data, latest.data)
  ) {
    fail(
      `session.result ${JSON.stringify(result)} is not the latest record ${latest.resultId} (${latest.toolCallId})`,
    );
  }
}

/** Assistant messages and call records point at each other. */
function checkMessages(snap: SessionSnapshot, fail: (what: string) => void) {
  const calls = new Map(snap.toolCalls.map((c) => [c.callId, c]));
  const referenced = new Set<string>();
  for (const m of snap.messages) {
    if (m.role !== "assistant") continue;
    for (const part of m.content as Array<{ type: string; toolCallId?: string }>) {
      if (part.type !== "tool-call" || !part.toolCallId) continue;
      referenced.add(part.toolCallId);
      const call = calls.get(part.toolCallId);
      if (!call || call.messageId !== m.id)
        fail(`message ${m.id} calls ${part.toolCallId}, which has no record of that message`);
    }
  }
  for (const c of snap.toolCalls)
    if (!referenced.has(c.callId)) fail(`call ${c.callId} is in no assistant message`);
}
