// Several described statements on a pipelined connection (pipeline.ts) under one Sync, so the
// backend commits them as one implicit transaction and answers them with one ReadyForQuery.
// Each Sync costs the backend a commit (its WAL write and the end of a transaction) and a flush
// of its output to the socket, which wakes the runtime; the store's statements of one tick,
// written back to back by concurrent sessions, share those instead (docs/scale-out.md,
// "Pipelined connections").
//
// One transaction means one failure fails them all: the statement at fault stops the rest and
// the earlier ones roll back. Every part is then sent again on its own, with its own Sync, so
// each gets the outcome it would have had alone, and nothing of a part is reported before the
// transaction that holds it has committed (results are handed out on the ReadyForQuery).
//
// Like PreparedQuery this is a subclass of node-postgres' `Query`, which pipeline mode requires;
// the client gives it every message between its first Bind and its ReadyForQuery.

import pg from "pg";
import { PreparedQuery, type WireConnection } from "./prepared-query.ts";

type Part = PreparedQuery & {
  callback: (error: Error | undefined, result: pg.QueryResult) => void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: WireConnection): void;
  handleReadyForQuery(connection: WireConnection): void;
  handleError(error: Error, connection: WireConnection): void;
};
interface QueryInternals {
  callback: (error: Error | undefined) => void;
  handleReadyForQuery(connection: WireConnection): void;
  handleError(error: Error, connection: WireConnection): void;
}

const BaseQuery = pg.Query as unknown as new (
  text: string,
  values: unknown[],
  callback: (error: Error | undefined) => void,
) => QueryInternals;

/**
 * At most this many statements share one Sync. A group's answers all come at its end, so while
 * the runtime reads one group the backend should have the next to run: on the benchmark, one
 * process ran 1,145–1,175 turns/s with groups of 4, 1,030–1,107 with 8 and 694–982 with a
 * whole tick in one group (the runtime and the backend taking turns to wait), against 969–1,119
 * with none (docs/performance.md).
 */
export const SYNC_GROUP_LIMIT = 4;

/**
 * The limit while the runtime's thread waits for a core half the time (core-wait.ts): then the
 * cores are all taken (four processes and their backends on two), no core idles while a bigger
 * group runs, and fewer commits leave more CPU for the turns.
 */
export const SHORT_OF_CPU_GROUP_LIMIT = 16;

/** Severities with which the server ends the connection after the error. */
const ENDS_SESSION = new Set(["FATAL", "PANIC"]);

export class SyncGroup extends BaseQuery {
  private readonly parts: Part[] = [];
  /** Each part's lock key (`add`), "" for none; parallel to `parts`. */
  private readonly locks: string[] = [];
  /** The parts written, in order; the index of the one whose messages come next. */
  private readonly sent: Part[] = [];
  private next = 0;

  /** A group on `client`, which runs its parts again one by one if the group fails. */
  constructor(readonly client: pg.Client) {
    // The text is only for node-postgres' checks and logs; `submit` writes the parts instead.
    super("-- a group of described statements", [], () => {});
  }

  /** How many statements the group holds (the benchmark counts each as a round trip). */
  get statements(): number {
    return this.parts.length;
  }

  /** The one statement of a group of one, to send on its own; null for more (or none). */
  single(): pg.Submittable | null {
    return this.parts.length === 1 ? (this.parts[0] as unknown as pg.Submittable) : null;
  }

  /**
   * `query` must be described on the group's connection (`PreparedQuery#isDescribedOn`). `locks`
   * names what it locks (a session id, an idempotency key), if anything.
   */
  add(query: PreparedQuery, locks = ""): void {
    this.parts.push(query as Part);
    this.locks.push(locks);
  }

  /** node-postgres' entry point: every part's Bind and Execute, then one Sync. */
  submit(connection: WireConnection): null {
    connection.stream.cork?.();
    try {
      for (const part of this.inLockOrder()) {
        if (part.executeInGroup(connection)) this.sent.push(part);
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  /**
   * The parts, those that lock a row ordered by its key. A group holds its locks until it
   * commits; two groups (of two processes) that took two sessions' rows in opposite orders would
   * each wait for the other until PostgreSQL's deadlock check (1 s) failed one. Taken in one
   * order, one waits and the other finishes. The sort is stable, so the parts of one session keep
   * the order they were sent in, and the parts that lock nothing come first.
   */
  private inLockOrder(): Part[] {
    const { parts, locks } = this;
    let sorted = true;
    for (let i = 1; i < locks.length; i++) if (locks[i - 1]! > locks[i]!) sorted = false;
    if (sorted) return parts;
    const order = parts.map((_, i) => i);
    order.sort((a, b) => (locks[a]! < locks[b]! ? -1 : locks[a]! > locks[b]! ? 1 : a - b));
    return order.map((i) => parts[i]!);
  }

  handleRowDescription(): void {
    // No Describe is sent for a part, so none comes; a part's rows use its known description.
  }

  handleDataRow(message: unknown): void {
    this.sent[this.next]?.handleDataRow(message);
  }

  handleCommandComplete(message: unknown, connection: WireConnection): void {
    this.sent[this.next++]?.handleCommandComplete(message, connection);
  }

  handleEmptyQuery(): void {
    this.next++;
  }

  override handleReadyForQuery(connection: WireConnection): void {
    // The transaction committed: every part's result stands.
    for (const part of this.sent) part.handleReadyForQuery(connection);
    super.handleReadyForQuery(connection);
  }

  override handleError(error: Error, connection: WireConnection): void {
    if (error instanceof pg.DatabaseError && !ENDS_SESSION.has(error.severity ?? "")) {
      // The server refused one part (or the commit) and rolled the group back: each part again
      // on its own, behind the group's Sync, so it is answered after the group's ReadyForQuery.
      for (const part of this.sent) {
        this.client.query(
          new PreparedQuery(
            part.name,
            part.text,
            part.values,
            part.callback,
          ) as unknown as pg.Submittable,
        );
      }
    } else {
      // The connection is gone (the server ends it with a FATAL error, e.g. at shutdown) or timed
      // out: every part fails with that error, which tells the pipeline to drop the connection.
      for (const part of this.sent) part.handleError(error, connection);
    }
    super.handleError(error, connection);
  }
}
