import { OpenComputerError } from "@opencomputer/agent";
import type { TurnRecord } from "../store/records.ts";
import { NotFoundError } from "./api-errors.ts";
import type { EngineContext } from "./context.ts";

const SETTLED = new Set(["completed", "failed", "cancelled"]);
const POLL_MS = 250;

/**
 * Waits for a turn to settle. Wakes on this process's own commits and also polls, so a turn run
 * by another process is seen too.
 */
export function waitForTurn(
  ctx: EngineContext,
  sessionId: string,
  turnId: string,
  timeoutMs: number,
): Promise<TurnRecord> {
  return new Promise((resolve, reject) => {
    let done = false;
    let checking = false;
    let recheck = false;
    const finish = (error: unknown, turn?: TurnRecord) => {
      if (done) return;
      done = true;
      unsubscribe();
      clearInterval(poll);
      clearTimeout(timer);
      if (turn) resolve(turn);
      else reject(error);
    };
    const check = async () => {
      if (done) return;
      if (checking) {
        recheck = true;
        return;
      }
      checking = true;
      try {
        do {
          recheck = false;
          const turn = await ctx.store.getTurn(sessionId, turnId);
          if (!turn) finish(new NotFoundError("turn", turnId));
          else if (SETTLED.has(turn.status)) finish(null, turn);
        } while (recheck && !done);
      } catch (error) {
        finish(error);
      } finally {
        checking = false;
      }
    };
    const unsubscribe = ctx.notifier.subscribe(sessionId, (events) => {
      if (
        events.some(
          (e) => e.turnId === turnId && /^turn\.(completed|failed|cancelled)$/.test(e.type),
        )
      )
        void check();
    });
    const poll = setInterval(check, POLL_MS);
    const timer = setTimeout(
      () =>
        finish(
          new OpenComputerError("timeout", `Turn ${turnId} did not settle within ${timeoutMs} ms`, {
            path: "turnId",
          }),
        ),
      timeoutMs,
    );
    void check();
  });
}
