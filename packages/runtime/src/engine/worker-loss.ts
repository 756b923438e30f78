// How often a turn's agent worker was lost in this runtime. Kept in memory only: after a real
// crash of the runtime the count starts again, which bounds the retries per runtime life. One
// per runtime (on its EngineContext), so two runtimes in one process count apart.

const REMEMBERED = 1000;

export class WorkerLosses {
  private readonly losses = new Map<string, number>();

  /** Counts one more loss for the turn and returns how many it has had. */
  note(turnId: string): number {
    const count = (this.losses.get(turnId) ?? 0) + 1;
    // Re-inserted so the most recent turns are the ones remembered.
    this.losses.delete(turnId);
    this.losses.set(turnId, count);
    if (this.losses.size > REMEMBERED) {
      this.losses.delete(this.losses.keys().next().value as string);
    }
    return count;
  }
}
