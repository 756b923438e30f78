// How often a turn's agent worker was lost in this process. Kept in memory only: after a real
// crash of the runtime the count starts again, which bounds the retries per runtime life.

const losses = new Map<string, number>();
const REMEMBERED = 1000;

/** Counts one more loss for the turn and returns how many it has had. */
export function noteWorkerLoss(turnId: string): number {
  const count = (losses.get(turnId) ?? 0) + 1;
  losses.delete(turnId);
  losses.set(turnId, count);
  if (losses.size > REMEMBERED) losses.delete(losses.keys().next().value as string);
  return count;
}
