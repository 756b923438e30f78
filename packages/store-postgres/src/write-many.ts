// Writes asked for in the same tick go to the database as one call of `oc_write_many`
// (write-many-function.ts) when they can: concurrent sessions' writes then share each set-based
// statement instead of running about eight statements each. A write that cannot share (see
// WriteParts#combinable), a session's second write in the tick, and a tick with one write go
// alone through `oc_write`, as before.
//
// `oc_write_many` refuses nothing on its own: when a write of the call would be refused (or its
// claim lost, or a statement fails), the call rolls back with nothing written, and each of its
// writes is sent again alone, so each gets exactly the outcome and error it would have had.
import pg from "pg";
import { brokenConnection } from "./pipeline.ts";
import { textArray } from "./text-array.ts";
import { type WriteParts, type WriteRow, writeParams } from "./write-batch.ts";

/** At most this many writes in one call; a larger tick is sent in several. */
const MAX_WRITES = 64;

export const WRITE_CALL = `SELECT base_seq, lease_epoch, claimed FROM oc_write($1, $2, $3, $4,
  $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`;

export const WRITE_MANY_CALL = `SELECT base_seqs, lease_epochs FROM oc_write_many($1, $2, $3,
  $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
  $24, $25, $26, $27)`;

interface ManyRow {
  base_seqs: string[];
  lease_epochs: string[];
}

/** Runs a named statement (PostgresStore#query); `locks`: the session row it locks first. */
export type RunStatement = <R extends pg.QueryResultRow>(
  text: string,
  values: unknown[],
  locks?: string,
) => Promise<pg.QueryResult<R>>;

interface Pending {
  parts: WriteParts;
  resolve: (row: WriteRow) => void;
  reject: (error: unknown) => void;
}

export class WriteCombiner {
  private pending: Pending[] = [];

  constructor(
    private readonly run: RunStatement,
    /** False sends every write alone (the store's `combineWrites` option). */
    private readonly enabled = true,
  ) {}

  /** The write's row, once the call carrying it committed; rejects with its error. */
  write(parts: WriteParts): Promise<WriteRow> {
    if (!this.enabled || !parts.combinable) return this.alone(parts);
    return new Promise<WriteRow>((resolve, reject) => {
      this.pending.push({ parts, resolve, reject });
      if (this.pending.length === 1) process.nextTick(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    const bySession = new Map<string, number>();
    for (const p of batch) {
      bySession.set(p.parts.sessionId, (bySession.get(p.parts.sessionId) ?? 0) + 1);
    }
    // A session's writes of one tick go alone, in the order asked: the second must see the first.
    const shared = batch.filter((p) => bySession.get(p.parts.sessionId) === 1);
    for (const p of batch) {
      if (bySession.get(p.parts.sessionId)! > 1) this.alone(p.parts).then(p.resolve, p.reject);
    }
    // By session id, the order in which concurrent groups take session rows (sync-group.ts).
    shared.sort((a, b) => (a.parts.sessionId < b.parts.sessionId ? -1 : 1));
    for (let at = 0; at < shared.length; at += MAX_WRITES) {
      const call = shared.slice(at, at + MAX_WRITES);
      if (call.length === 1) this.alone(call[0]!.parts).then(call[0]!.resolve, call[0]!.reject);
      else void this.together(call);
    }
  }

  private async alone(parts: WriteParts): Promise<WriteRow> {
    return (await this.run<WriteRow>(WRITE_CALL, writeParams(parts), parts.sessionId)).rows[0]!;
  }

  private async together(call: Pending[]): Promise<void> {
    let row: ManyRow;
    try {
      const result = await this.run<ManyRow>(
        WRITE_MANY_CALL,
        manyParams(call.map((p) => p.parts)),
        call[0]!.parts.sessionId,
      );
      row = result.rows[0]!;
    } catch (error) {
      if (!(error instanceof pg.DatabaseError) || brokenConnection(error)) {
        for (const p of call) p.reject(error);
        return;
      }
      // Nothing of the call was written: each write again alone, for its own outcome.
      for (const p of call) this.alone(p.parts).then(p.resolve, p.reject);
      return;
    }
    for (let i = 0; i < call.length; i++) {
      call[i]!.resolve({
        base_seq: row.base_seqs[i]!,
        lease_epoch: row.lease_epochs[i]!,
        claimed: true,
      });
    }
  }
}

/** The parameters of WRITE_MANY_CALL for `writes` (write-many-function.ts describes them). */
export function manyParams(writes: readonly WriteParts[]): unknown[] {
  const calls: string[] = [];
  const callsOf: number[] = [];
  const ops: string[] = [];
  const opOf: number[] = [];
  const kinds: string[] = [];
  const evOf: number[] = [];
  const evOrd: number[] = [];
  writes.forEach((w, i) => {
    for (const id of w.expectOpenCalls?.callIds ?? []) {
      calls.push(id);
      callsOf.push(i + 1);
    }
    for (const op of w.ops) {
      ops.push(JSON.stringify(op));
      opOf.push(i + 1);
      kinds.push(op.k);
    }
    for (let e = 0; e < w.ids.length; e++) {
      evOf.push(i + 1);
      evOrd.push(e + 1);
    }
  });
  const text = (pick: (w: WriteParts) => string | null | undefined) => textArray(writes.map(pick));
  const flat = (pick: (w: WriteParts) => readonly (string | undefined)[]) =>
    textArray(writes.flatMap(pick));
  return [
    text((w) => w.sessionId),
    text((w) => w.claim?.runtimeId),
    writes.map((w) => w.claim?.expiresAt ?? null),
    writes.map((w) => w.claim?.now ?? null),
    text((w) => w.fence?.runtimeId),
    writes.map((w) => w.fence?.epoch ?? null),
    text((w) => w.expectTurn?.id),
    text((w) => w.expectTurn?.status.join(",")),
    text((w) => w.expectSession?.status.join(",")),
    text((w) => w.expectOpenCalls?.turnId),
    textArray(calls),
    callsOf,
    textArray(ops),
    opOf,
    textArray(kinds),
    writes.map((w) => w.sessionMask),
    text((w) => w.sessionRow),
    writes.map((w) => w.ids.length),
    evOf,
    evOrd,
    flat((w) => w.ids),
    flat((w) => w.turns),
    flat((w) => w.types),
    flat((w) => w.data),
    text((w) => w.timestamp),
    text((w) => w.channel),
    writes.map((w) => w.work),
  ];
}
