// What the runtime promises after any kill and resume, checked on the store a crash run left
// and the egress log its runtimes wrote:
//   1. one outcome per call: exactly one tool.completed or tool.failed; one result record at most;
//   2. a completed call never runs again: no tool.started after its tool.completed;
//   3. a call is re-executed only under its own toolCallId: the calls made are the calls of a run
//      without kills (the scripted model is deterministic), and every execution that called out
//      belongs to a call in the store;
//   4. an approval is applied at most once (its apply started once at most).
// And, for the user: a tool whose call sent the same write twice (in two executions) without an
// Idempotency-Key carrying the call's id (for an apply, the decision's id) is reported by name.

import { canonicalJson, type Store } from "@opencomputer/runtime";

export interface EgressLine {
  execution: string;
  sessionId: string;
  callId?: string;
  phase?: "run" | "preview" | "apply";
  decisionId?: string;
  connectionId: string;
  method: string;
  path: string;
  idempotencyKey: string | null;
}

export interface RepeatedWrite {
  tool: string;
  callId: string;
  phase: string;
  request: string;
  times: number;
  idempotencyKeys: Array<string | null>;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The calls of a session as `tool input` lines, sorted: what a run without kills made. */
export async function callSignature(store: Store, sessionId: string): Promise<string[]> {
  return (await store.listToolCalls(sessionId))
    .map((c) => `${c.tool} ${canonicalJson(c.input as never)}`)
    .sort();
}

export async function checkCrashRun(
  store: Store,
  sessionId: string,
  egress: EgressLine[],
  baseline: string[] | undefined,
): Promise<{ violations: string[]; repeated: RepeatedWrite[] }> {
  const violations: string[] = [];
  const events = await store.readEvents(sessionId, 0, 1_000_000);
  const calls = await store.listToolCalls(sessionId);
  const byCall = new Map<string, string[]>();
  for (const e of events) {
    const callId = (e.data as { callId?: string }).callId;
    if (!e.type.startsWith("tool.") || !callId) continue;
    byCall.set(callId, [...(byCall.get(callId) ?? []), e.type]);
  }
  for (const [callId, types] of byCall) {
    const outcomes = types.filter((t) => t === "tool.completed" || t === "tool.failed").length;
    if (outcomes !== 1)
      violations.push(`call ${callId} has ${outcomes} outcomes (expected exactly 1)`);
    const done = types.indexOf("tool.completed");
    if (done >= 0 && types.slice(done + 1).includes("tool.started"))
      violations.push(`call ${callId} was started again after it completed`);
  }
  const results = await store.listResults(sessionId, { limit: 1_000 });
  const resultCalls = results.map((r) => r.toolCallId);
  if (new Set(resultCalls).size !== resultCalls.length)
    violations.push("two result records share a tool call");

  const made = await callSignature(store, sessionId);
  // Only a scripted model makes the same calls every run; a real one has no baseline to match.
  if (baseline && canonicalJson(made) !== canonicalJson(baseline))
    violations.push(
      `the calls differ from a run without kills (a call re-executed under a new id?): ${made.length} calls, expected ${baseline.length}`,
    );
  const known = new Map(calls.map((c) => [c.callId, c.tool]));
  for (const line of egress)
    if (line.callId && !known.has(line.callId))
      violations.push(
        `an execution of unknown call ${line.callId} called out (${line.method} ${line.path})`,
      );

  for (const a of await store.listApprovals(sessionId)) {
    if (a.attempts > 1) violations.push(`approval ${a.id} was applied ${a.attempts} times`);
    const applied = events.filter(
      (e) =>
        e.type === "approval.applied" && (e.data as { approvalId?: string }).approvalId === a.id,
    ).length;
    if (applied > 1) violations.push(`approval ${a.id} has ${applied} approval.applied events`);
  }
  return { violations, repeated: repeatedWrites(egress, known) };
}

/** Writes a call sent in more than one execution, without a key carrying the call's id. */
function repeatedWrites(egress: EgressLine[], tools: Map<string, string>): RepeatedWrite[] {
  const groups = new Map<string, EgressLine[]>();
  for (const line of egress) {
    if (!line.callId || READS.has(line.method)) continue;
    const key = `${line.callId}\0${line.phase}\0${line.connectionId} ${line.method} ${line.path}`;
    groups.set(key, [...(groups.get(key) ?? []), line]);
  }
  const out: RepeatedWrite[] = [];
  for (const lines of groups.values()) {
    if (new Set(lines.map((l) => l.execution)).size < 2) continue;
    const first = lines[0]!;
    const id = first.phase === "apply" ? first.decisionId : first.callId;
    const keyed = lines.every((l) => id !== undefined && l.idempotencyKey?.includes(id));
    if (keyed) continue;
    out.push({
      tool: tools.get(first.callId!) ?? "(unknown)",
      callId: first.callId!,
      phase: first.phase ?? "run",
      request: `${first.method} ${first.connectionId} ${first.path}`,
      times: lines.length,
      idempotencyKeys: lines.map((l) => l.idempotencyKey),
    });
  }
  return out;
}
