import { OpenComputerError } from "@opencomputer/agent";
import type { EventRecord, TurnRecord } from "../ports/records.ts";
import { NotFoundError } from "./api-errors.ts";
import type { EngineContext } from "./context.ts";
import type { Deadlines } from "./deadlines.ts";

const SETTLED = new Set(["completed", "failed", "cancelled"]);
const TERMINAL_EVENTS = new Set(["turn.completed", "turn.failed", "turn.cancelled"]);

/** Whether the events include the turn's terminal event. */
export function settles(events: readonly EventRecord[], turnId: string): boolean {
  return events.some((e) => e.turnId === turnId && TERMINAL_EVENTS.has(e.type));
}

export interface WaitOptions {
  /**
   * Commits of every process on the store (a shared signal): a turn another process runs is
   * seen at its settling commit. `lastSeq` null means notifications may have been missed.
   */
  watchRemote?: (sessionId: string, listener: (lastSeq: number | null) => void) => () => void;
  /**
   * Whether this process claimed the turn and runs it: then its settling commit is this
   * process's own and the local subscription sees it, so the wait does not watch the shared
   * signal (nor reads what it repeats). Should the turn move to another process (this one lost
   * the lease), the next poll starts watching.
   */
  runsHere?: (sessionId: string, turnId: string) => boolean;
  /** The turn is read again this often whatever was heard (a missed signal, another process). */
  pollMs: number;
  /** Where the poll and the timeout are kept (one timer for all waits, see deadlines.ts). */
  deadlines: Deadlines<() => void>;
}

/**
 * Waits for a turn to settle. Wakes on this process's own commits (their events say whether the
 * turn settled), on other processes' commits when a shared signal is given, and on a poll.
 */
export function waitForTurn(
  ctx: EngineContext,
  sessionId: string,
  turnId: string,
  timeoutMs: number,
  options: WaitOptions,
): Promise<TurnRecord> {
  const { deadlines, pollMs } = options;
  const timeoutAt = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    let done = false;
    let checking = false;
    let recheck = false;
    const finish = (error: unknown, turn?: TurnRecord) => {
      if (done) return;
      done = true;
      unsubscribe();
      unwatchRemote?.();
      deadlines.delete(onTimer);
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
    // The highest seq this process committed itself: a shared signal repeats those commits,
    // and the local subscription already looked at their events.
    let localSeq = 0;
    const unsubscribe = ctx.notifier.subscribe(sessionId, (events) => {
      const last = events[events.length - 1];
      if (last && last.seq > localSeq) localSeq = last.seq;
      if (settles(events, turnId)) void check();
    });
    // Other processes' commits are watched only once the turn may run elsewhere: watching
    // follows the session on the shared signal (a statement on PostgreSQL), and a turn this
    // process runs is seen settling by the local subscription. Looked at again on every poll.
    let unwatchRemote: (() => void) | undefined;
    const watchIfElsewhere = () => {
      if (done || unwatchRemote || !options.watchRemote) return;
      if (options.runsHere?.(sessionId, turnId)) return;
      unwatchRemote = options.watchRemote(sessionId, (lastSeq) => {
        if (lastSeq !== null && options.runsHere?.(sessionId, turnId)) return;
        if (lastSeq === null || lastSeq > localSeq) void check();
      });
    };
    watchIfElsewhere();
    // One deadline for both: the next poll, or the timeout when it comes first.
    function onTimer() {
      if (done) return;
      const now = Date.now();
      if (now >= timeoutAt) {
        finish(
          new OpenComputerError("timeout", `Turn ${turnId} did not settle within ${timeoutMs} ms`, {
            path: "turnId",
          }),
        );
        return;
      }
      deadlines.set(onTimer, Math.min(now + pollMs, timeoutAt));
      watchIfElsewhere();
      void check();
    }
    deadlines.set(onTimer, Math.min(Date.now() + pollMs, timeoutAt));
    // A turn this process claimed has not settled (its terminal event, published here, ends
    // the claim): nothing to read before that event.
    if (!options.runsHere?.(sessionId, turnId)) void check();
  });
}
