/**
 * Runs a session's tasks one at a time in call order. Commands of one session share a
 * workspace, so letting two interleave would make each one's outcome depend on timing.
 */
export class SessionQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(sessionId) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(sessionId, tail);
    void tail.then(() => {
      // Forget idle sessions so a long-lived runtime does not accumulate one entry per session.
      if (this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    });
    return result;
  }
}
