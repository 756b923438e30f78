/**
 * Many keyed deadlines on one Node timer. A run of the engine used to create and clear four
 * timers (lease renewal, the wait's poll and timeout, the idle release); before Node's timer
 * code is optimized (the first few thousand turns of a process) each cost about 6 µs, as much
 * as a store write's syscall. Here setting or dropping a deadline is a Map operation: the one
 * timer is armed for the earliest deadline and only re-armed when an earlier one comes, and a
 * deadline dropped before it fires leaves the timer to fire once for nothing.
 *
 * Each deadline fires once, at its time or just after (never before), unless it is dropped or
 * set again first; a callback may set its key again (a periodic deadline). With `keepAlive`,
 * the timer keeps the process alive while any deadline is set, as a timer per deadline would.
 */
export class Deadlines<K> {
  private readonly due = new Map<K, number>();
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly onDue: (key: K) => void,
    private readonly options: { keepAlive: boolean },
  ) {}

  /** Calls `onDue(key)` at `at` (ms since the epoch, as Date.now()), replacing its deadline. */
  set(key: K, at: number): void {
    if (this.closed) return;
    this.due.set(key, at);
    if (at < this.armedFor) this.arm(at);
    else if (this.options.keepAlive && this.due.size === 1) this.timer?.ref();
  }

  delete(key: K): void {
    if (!this.due.delete(key)) return;
    // Left armed: cheaper than clearing it, and it finds nothing due when it fires.
    if (this.due.size === 0 && this.options.keepAlive) this.timer?.unref();
  }

  get size(): number {
    return this.due.size;
  }

  close(): void {
    this.closed = true;
    this.due.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - Date.now()));
    if (!this.options.keepAlive) this.timer.unref();
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = Date.now();
    const fired: K[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const [key, at] of this.due) {
      if (at <= now) fired.push(key);
      else if (at < next) next = at;
    }
    for (const key of fired) this.due.delete(key);
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    for (const key of fired) {
      if (this.closed) return;
      this.onDue(key);
    }
  }
}
