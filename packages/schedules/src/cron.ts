// Cron parsing and next-occurrence through croner (five-field mode, IANA zones, DST): what a
// schedule's `cron` and `timezone` mean is croner's rule, not ours. In a zone's spring-forward
// gap a fixed-time occurrence runs at the first valid time after the gap; in the repeated hour
// of fall-back it runs once (croner's fixed-time rule).
import { Cron } from "croner";

export interface CompiledCron {
  /** The first occurrence strictly after `after`, or null when there is none. */
  next(after: Date): Date | null;
}

/** Parses a five-field expression in `timezone`; throws with croner's reason when it is invalid. */
export function compileCron(cron: string, timezone: string): CompiledCron {
  const job = new Cron(cron, { timezone, mode: "5-part", paused: true });
  return {
    next: (after) => job.nextRun(after),
  };
}

/** Why the expression cannot be scheduled, or null when it can. */
export function cronProblem(cron: string, timezone: string): string | null {
  try {
    const compiled = compileCron(cron, timezone);
    // A valid expression that never occurs (e.g. "0 0 31 2 *") is as useless as an invalid one.
    if (compiled.next(new Date()) === null) return "never occurs";
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * The occurrences in (after, until], oldest first, at most `max` (the first `max`; `more` says
 * whether there were others).
 */
export function occurrencesBetween(
  compiled: CompiledCron,
  after: Date,
  until: Date,
  max: number,
): { times: Date[]; more: boolean } {
  const times: Date[] = [];
  let cursor = after;
  for (;;) {
    const next = compiled.next(cursor);
    if (next === null || next.getTime() > until.getTime()) return { times, more: false };
    if (times.length === max) return { times, more: true };
    times.push(next);
    cursor = next;
  }
}
