// Lease releases asked for in the same tick go to the database as one statement. A runtime gives
// up the leases of its idle sessions from one timer (runtime-actors.ts rounds each release time
// up to a shared grid), so under load dozens come due together: one statement for all of them
// instead of one round trip and one transaction each (docs/scale-out.md has the figures).
import type { Lease } from "@opencomputer/runtime";

/** At most this many leases in one statement; a larger tick is sent in several. */
const MAX_BATCH = 500;

interface Pending {
  sessionId: string;
  lease: Lease;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class LeaseReleases {
  private pending: Pending[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    /** Sends one batch: parallel arrays of session ids, runtime ids, epochs and expiries. */
    private readonly send: (
      sessionIds: string[],
      runtimeIds: string[],
      epochs: number[],
      expiries: number[],
    ) => Promise<unknown>,
  ) {}

  /** Resolves once the statement carrying this release committed; rejects with its error. */
  release(sessionId: string, lease: Lease): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ sessionId, lease, resolve, reject });
      if (this.pending.length === 1) process.nextTick(() => void this.flush());
    });
  }

  /** Sends what is pending now (at close, so nothing asked for is dropped). */
  flush(): Promise<void> {
    const batch = this.pending;
    if (batch.length === 0) return this.flushing ?? Promise.resolve();
    this.pending = [];
    const sent: Promise<void>[] = [];
    for (let at = 0; at < batch.length; at += MAX_BATCH) {
      sent.push(this.sendBatch(batch.slice(at, at + MAX_BATCH)));
    }
    const all = Promise.all(sent).then(() => {});
    this.flushing = all;
    return all;
  }

  private async sendBatch(batch: Pending[]): Promise<void> {
    try {
      await this.send(
        batch.map((p) => p.sessionId),
        batch.map((p) => p.lease.runtimeId),
        batch.map((p) => p.lease.epoch),
        batch.map((p) => p.lease.expiresAt),
      );
      for (const p of batch) p.resolve();
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  }
}
