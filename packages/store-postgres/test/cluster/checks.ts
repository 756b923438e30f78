// What must hold for a session of the fixture agent once its turn settled, whatever process ran
// it or died while running it: the log is gapless, the turn completed once, every call
// completed exactly once in the log, the result was committed once, and no process that kept
// its lease ran a call to completion twice.
import type { Store } from "@opencomputer/runtime";
import type { ToolRun } from "./servers.ts";

export async function sessionViolations(
  store: Store,
  sessionId: string,
  runs: readonly ToolRun[],
  /** Processes that were killed or paused: their late runs are expected, their writes refused. */
  interrupted: ReadonlySet<number>,
): Promise<string[]> {
  const out: string[] = [];
  const fail = (what: string) => out.push(`${sessionId}: ${what}`);
  const events = await store.readEvents(sessionId, 0, 100_000);
  events.forEach((e, i) => {
    if (e.seq !== i + 1) fail(`event ${i} has seq ${e.seq}`);
  });
  if (events[0]?.type !== "session.created") fail("the first event is not session.created");

  const turns = await store.listTurns(sessionId);
  if (turns.length !== 1) fail(`${turns.length} turns, expected 1`);
  for (const turn of turns) {
    if (turn.status !== "completed") fail(`turn ${turn.id} is ${turn.status}`);
    const settled = events.filter(
      (e) => e.turnId === turn.id && /^turn\.(completed|failed|cancelled)$/.test(e.type),
    );
    if (settled.length !== 1) fail(`turn ${turn.id} settled ${settled.length} times`);
  }

  const calls = await store.listToolCalls(sessionId);
  if (calls.length !== 3) fail(`${calls.length} tool calls, expected 3`);
  for (const call of calls) {
    if (call.status !== "completed") fail(`call ${call.callId} is ${call.status}`);
    const completed = events.filter(
      (e) => e.type === "tool.completed" && (e.data as { callId?: string }).callId === call.callId,
    );
    if (completed.length !== 1) fail(`call ${call.callId} completed ${completed.length} times`);
    const doneBySurvivors = runs.filter(
      (r) =>
        r.sessionId === sessionId &&
        r.toolCallId === call.callId &&
        r.phase === "done" &&
        !interrupted.has(r.pid),
    );
    if (doneBySurvivors.length > 1) fail(`call ${call.callId} ran to completion twice`);
  }

  const results = await store.listResults(sessionId, { limit: 10 });
  if (results.length !== 1) fail(`${results.length} results, expected 1`);
  else if (JSON.stringify(results[0]!.data) !== JSON.stringify({ steps: 2 }))
    fail(`result ${JSON.stringify(results[0]!.data)}`);
  const session = await store.getSession(sessionId);
  if (!session?.result) fail("session.result is missing");
  if (session?.status !== "idle") fail(`session is ${session?.status}`);
  return out;
}
