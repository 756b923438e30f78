/**
 * Many keyed deadlines on one Node timer. A run of the engine used to create and clear four
 * timers (lease renewal, the wait's poll and timeout, the idle release); before Node's timer
 * code is optimized (the first few thousand turns of a process) each cost about 6 µs, as much
 * as a store write's syscall. Here setting or dropping a deadline is a Map operation and a push
 * on a binary heap: the one timer is armed for the earliest deadline and only re-armed when an
 * earlier one comes, and a deadline dropped before it fires leaves the timer to fire once for
 * nothing. Firing takes the due deadlines off the heap, so a runtime with thousands of idle
 * sessions pending release does not look at all of them every time one is due.
 *
 * Each deadline fires once, at its time or just after (never before), unless it is dropped or
 * set again first; a callback may set its key again (a periodic deadline). With `keepAlive`,
 * the timer keeps the process alive while any deadline is set, as a timer per deadline would.
 */
export class Deadlines<K> {
  /** Each key's current deadline. */
  private readonly due = new Map<K, number>();
  /**
   * Min-heap of [deadline, key] by deadline. Setting a key again or dropping it leaves its old
   * entry behind; an entry counts only while it matches `due`, and stale ones are dropped when
   * they reach the top or when they outnumber the live ones.
   */
  private heap: Array<[number, K]> = [];
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
    this.push([at, key]);
    if (this.heap.length > 64 && this.heap.length > 2 * this.due.size) this.rebuild();
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
    this.heap = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - Date.now()));
    if (!this.options.keepAlive || this.due.size === 0) this.timer.unref();
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = Date.now();
    const fired: K[] = [];
    let top = this.heap[0];
    while (top !== undefined && (top[0] <= now || this.due.get(top[1]) !== top[0])) {
      this.pop();
      // A stale entry (the key was dropped or set again) is only discarded.
      if (this.due.get(top[1]) === top[0]) {
        this.due.delete(top[1]);
        fired.push(top[1]);
      }
      top = this.heap[0];
    }
    if (top !== undefined) this.arm(top[0]);
    for (const key of fired) {
      if (this.closed) return;
      this.onDue(key);
    }
  }

  private push(entry: [number, K]): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(entry);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]![0] <= entry[0]) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]![0] < heap[left]![0] ? right : left;
      if (heap[child]![0] >= last[0]) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }

  /** Drops the stale entries: a heap of the live deadlines only. */
  private rebuild(): void {
    this.heap = [];
    for (const [key, at] of this.due) this.push([at, key]);
  }
}
