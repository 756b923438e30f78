// The sessions a process's readers follow (WorkSignal#follow). A commit NOTIFYs its events only
// while its session is marked followed (write-function.ts FOLLOWED_SESSIONS_V9), so a reader's
// process marks the session row `followed_until = now + ttl` by the database's clock, and renews
// every session it follows in one statement each ttl/3: one periodic query per process, however
// many sessions it follows, and none while it follows nothing. A process that dies stops
// renewing and its marks lapse; one that stops following leaves its mark to lapse too (at worst
// a few spare notifications, and no statement).
//
// No gap: marking updates the session row, which every write locks first (FOR UPDATE), so a
// commit either sees the mark and notifies, or committed before the mark did, and the resync
// sent once the mark committed makes the readers read it.
import type pg from "pg";
import { DB_NOW_MS } from "./db-now.ts";

export interface FollowsOptions {
  /** `sessions`, qualified with the store's schema when it has one. */
  table: string;
  /** How long a mark lasts without renewal. */
  ttlMs: number;
  /** The sessions whose marks committed now: their readers must read once more. */
  onMarked(sessionIds: readonly string[]): void;
  onError(error: Error): void;
}

export class SessionFollows {
  /** Readers per followed session. */
  private readonly counts = new Map<string, number>();
  /** Followed sessions whose mark is not committed yet. */
  private readonly unmarked = new Set<string>();
  private flushQueued = false;
  private renewTimer: NodeJS.Timeout | null = null;
  /** When every mark was last renewed (performance.now()), to notice a renewal that came late. */
  private renewedAt = 0;
  /** The connection to mark on; null while the signal is disconnected. */
  client: pg.Client | null = null;

  constructor(private readonly options: FollowsOptions) {}

  get size(): number {
    return this.counts.size;
  }

  follow(sessionId: string): () => void {
    const count = this.counts.get(sessionId) ?? 0;
    this.counts.set(sessionId, count + 1);
    if (count === 0) {
      this.unmarked.add(sessionId);
      this.queueFlush();
      this.startRenewing();
    }
    let followed = true;
    return () => {
      if (!followed) return;
      followed = false;
      const left = (this.counts.get(sessionId) ?? 1) - 1;
      if (left > 0) {
        this.counts.set(sessionId, left);
        return;
      }
      this.counts.delete(sessionId);
      this.unmarked.delete(sessionId);
      if (this.counts.size === 0) this.stopRenewing();
    };
  }

  /** Marks every followed session again (after a reconnect, and on the renewal timer). */
  async renew(): Promise<void> {
    const late = this.renewedAt > 0 && performance.now() - this.renewedAt > this.options.ttlMs;
    const ids = [...this.counts.keys()];
    if (ids.length === 0) return;
    const started = performance.now();
    await this.mark(ids);
    this.renewedAt = started;
    for (const id of ids) this.unmarked.delete(id);
    // Marks may have lapsed in between (a stalled process): commits then went unheard.
    if (late) this.options.onMarked(ids);
  }

  stop(): void {
    this.stopRenewing();
    this.client = null;
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    // One statement for every session followed in this tick.
    setImmediate(() => {
      this.flushQueued = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const ids = [...this.unmarked];
    if (ids.length === 0 || !this.client) return; // the reconnect marks them
    for (const id of ids) this.unmarked.delete(id);
    try {
      await this.mark(ids);
    } catch (error) {
      // Still followed ones are marked on reconnect (renew); the signal resyncs then.
      for (const id of ids) if (this.counts.has(id)) this.unmarked.add(id);
      this.options.onError(error as Error);
      return;
    }
    this.options.onMarked(ids.filter((id) => this.counts.has(id)));
  }

  private async mark(ids: readonly string[]): Promise<void> {
    const client = this.client;
    if (!client) throw new Error("The LISTEN connection is down; follows are marked on reconnect.");
    // Rows are locked in id order, so two processes marking overlapping sets cannot deadlock.
    const { table } = this.options;
    await client.query(
      `UPDATE ${table} x SET followed_until = ${DB_NOW_MS} + $2
       FROM (SELECT id FROM ${table} WHERE id = ANY($1) ORDER BY id FOR UPDATE) l
       WHERE x.id = l.id`,
      [ids, this.options.ttlMs],
    );
  }

  private startRenewing(): void {
    if (this.renewTimer) return;
    this.renewedAt = performance.now();
    this.renewTimer = setInterval(
      () => void this.renew().catch((error: Error) => this.options.onError(error)),
      Math.max(1, Math.floor(this.options.ttlMs / 3)),
    );
    this.renewTimer.unref();
  }

  private stopRenewing(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
  }
}
