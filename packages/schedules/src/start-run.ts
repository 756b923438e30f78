// Starting one claimed run: a session and its first turn, each made idempotent by the run id, so
// a process that takes over a run whose starter died (or a start retried after an error) finds
// the session and turn the first attempt made instead of making a second pair.
import type { ScheduleDeclaration } from "@opencomputer/agent";
import type { ScheduleRunRow, TriggerStore } from "@opencomputer/runtime";
import type { ScheduleSessions } from "./types.ts";

export interface StartContext {
  store: TriggerStore;
  sessions: ScheduleSessions;
  now: () => number;
  maxAttempts: number;
}

const SETTLED = new Set(["completed", "failed", "cancelled"]);

/** The first turn's input: the dispatch, or a line naming the schedule when it has none. */
function dispatchInput(schedule: ScheduleDeclaration) {
  const { text, payload } = schedule.dispatch;
  if (text === undefined && payload === undefined) return { text: `Schedule ${schedule.id} fired` };
  return { ...(text !== undefined ? { text } : {}), ...(payload !== undefined ? { payload } : {}) };
}

/**
 * Runs `run` (held by this process): `started` with its session and turn. A failure leaves the
 * run `claimed` for a later attempt, or records it `failed` once `maxAttempts` are spent.
 */
export async function startRun(
  ctx: StartContext,
  run: ScheduleRunRow,
  schedule: ScheduleDeclaration,
): Promise<void> {
  const key = `schedule:${run.id}`;
  try {
    const { session } = await ctx.sessions.create({
      agentId: `${run.agentId}@${run.environment}`,
      environment: run.environment,
      source: "schedule",
      projectId: run.projectId,
      idempotencyKey: key,
    });
    const turn = await ctx.sessions.sendTurn(session.id, dispatchInput(schedule), {
      idempotencyKey: key,
      origin: {
        schedule: {
          scheduleId: run.scheduleId,
          runId: run.id,
          intendedAt: run.intendedAt,
          timezone: run.timezone,
          attempt: run.attempt,
          manual: run.manual,
        },
      },
    });
    await ctx.store.updateScheduleRun(run.id, ["claimed"], {
      status: "started",
      sessionId: session.id,
      turnId: turn.turnId,
      updatedAt: new Date(ctx.now()).toISOString(),
    });
  } catch (error) {
    if (run.attempt < ctx.maxAttempts) throw error;
    const code = (error as { code?: string }).code ?? "start_failed";
    await ctx.store.updateScheduleRun(run.id, ["claimed"], {
      status: "failed",
      error: `${code}: ${(error as Error).message}`.slice(0, 500),
      updatedAt: new Date(ctx.now()).toISOString(),
    });
  }
}

/**
 * Whether a `started` run's turn is still going; when it has settled, records the outcome
 * (`completed` / `failed` / `cancelled`) and returns false.
 */
export async function stillRunning(ctx: StartContext, run: ScheduleRunRow): Promise<boolean> {
  if (run.status === "claimed") return true;
  if (run.sessionId === null || run.turnId === null) return false;
  const session = await ctx.sessions.get(run.sessionId);
  const turn = session.turns.find((t) => t.id === run.turnId);
  const status = turn?.status ?? "failed";
  if (!SETTLED.has(status)) return true;
  await ctx.store.updateScheduleRun(run.id, ["started"], {
    status: status as "completed" | "failed" | "cancelled",
    updatedAt: new Date(ctx.now()).toISOString(),
  });
  return false;
}
