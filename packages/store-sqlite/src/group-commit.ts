// Group commit: many state changes share one SQLite transaction, while each one is made durable
// on its own by one append to the commit journal (journal.ts) before the store returns.
//
// Why: on the machines we measure, a SQLite commit in WAL mode costs about a dozen syscalls
// (frame writes per page, lock calls) and every autocommit read two more; a run of the engine
// made seven of them. An append is one write(). SQLite then commits the group as soon as the
// process is idle, or once it is `intervalMs` old (and on close), recording the last journal
// seq it holds in `journal_state` in the same commit.
//
// The rules that keep it exact:
// - A change runs in the open group; its statements (those that changed rows, with their
//   arguments) are appended as one record before the store returns. A throw after rows
//   changed, including a failed append, rolls the group back and replays the journal, which
//   holds every acknowledged change of the group but not this one: it never happened.
// - Only the holder of SQLite's write lock appends (the group is a BEGIN IMMEDIATE), so records
//   from all processes on one file are in commit order.
// - Whoever opens a group first replays the records after `journal_state.applied_seq` (left by
//   a process that died, or whose commit failed) and commits them; then the group writes its
//   records from the start of the file, over ones already committed (rewriting allocated
//   blocks is cheaper than growing and truncating the file).
// - Stores on the same file in one process commit each other's group before they read or write,
//   so they see each other's changes as separate connections always did.
// - Write-behind (deferred-rows.ts): most row changes are only journaled while the change runs;
//   SQLite runs them before the group's next statement of any other kind and before it commits.
//   What the writer remembers is forgotten whenever a group ends.
// A writer in another process waits for the group to end; so does a reader there that finds
// records in the journal its committed state does not hold (see beforeRead).

import { resolve } from "node:path";
import { StoreError } from "@opencomputer/runtime";
import type Database from "better-sqlite3";
import type { Journal, JournalRecord } from "./journal.ts";
import { RecordBuilder } from "./journal-codec.ts";
import type { PendingRows } from "./pending-rows.ts";
import type { StatementCache } from "./statements.ts";

/** A group commits early once it holds this many statements, to bound its memory and journal. */
const MAX_GROUP_STATEMENTS = 5_000;

const SELECT_APPLIED = "SELECT applied_seq FROM journal_state WHERE id = 1";
const UPDATE_APPLIED = "UPDATE journal_state SET applied_seq = ? WHERE id = 1";
const SELECT_FILE_ID = "SELECT file_id FROM journal_state WHERE id = 1";

const openGroups = new Map<string, Set<GroupCommit>>();

/**
 * What decides when a group ends: the clock its age is measured on, and the hook that runs the
 * commit once the process is idle (returns a cancel). Tests pass one they drive, so a group ends
 * when the test says and not when a loaded machine happens to be slow.
 */
export interface GroupClock {
  now(): number;
  onIdle(commit: () => void): () => void;
}

export const REAL_GROUP_CLOCK: GroupClock = {
  // Date.now(), not performance.now() (about 1 µs a call before warm-up); a clock that went
  // back ends the group as well.
  now: () => Date.now(),
  onIdle(commit) {
    const handle = setImmediate(commit);
    handle.unref();
    return () => clearImmediate(handle);
  },
};

export class GroupCommit {
  private readonly key: string;
  private cancelIdleCommit: (() => void) | null = null;
  private nextSeq = 0;
  private journalEnd = 0;
  private statementsInGroup = 0;
  private groupOpenedAt = 0;
  private checking = false;
  /** The record of the change being made; one buffer, reused. */
  private readonly record = new RecordBuilder();
  /** The last commit that failed; the journal still holds its changes for the next group. */
  lastCommitError: unknown = null;
  /** The last time running the pending rows failed (the journal was replayed instead). */
  lastFlushError: unknown = null;
  private flushing = false;

  constructor(
    private readonly db: Database.Database,
    private readonly statements: StatementCache,
    private readonly journal: Journal,
    private readonly intervalMs: number,
    /** Row changes written behind, and what the writer remembers for the open group. */
    private readonly behind: { pending: PendingRows; reset(): void },
    private readonly clock: GroupClock = REAL_GROUP_CLOCK,
  ) {
    this.key = resolve(db.name);
    let peers = openGroups.get(this.key);
    if (peers === undefined) {
      peers = new Set();
      openGroups.set(this.key, peers);
    }
    peers.add(this);
    const row = statements.get(SELECT_FILE_ID).get() as { file_id: string };
    journal.setOwner(row.file_id);
    statements.beforeUse = (sessionId) => this.beforeRead(sessionId);
    // Replays what a previous process left, so reads see it from the start.
    this.open();
    this.commit();
  }

  /** Wraps one state change: atomic, journaled before it returns, committed with its group. */
  wrap<A extends unknown[], R>(body: (...args: A) => R): (...args: A) => R {
    const statements = this.statements;
    return (...args: A): R => {
      if (statements.recording !== null) {
        // A bug, not an input: the record is shared, so a change made inside another one would
        // journal half of each.
        throw new Error("a store change was started inside another one");
      }
      this.open();
      const record = this.record;
      record.reset();
      statements.recording = record;
      try {
        const result = body(...args);
        statements.recording = null;
        if (record.statements > 0) this.append(record);
        return result;
      } catch (error) {
        statements.recording = null;
        // A refusal before any row changed needs no undo (a failing statement undoes itself).
        if (record.changedRows) this.undo();
        throw error;
      } finally {
        // A busy process whose work resolves as microtasks may not reach its idle callback for
        // a long time: its groups end by age.
        const age = this.clock.now() - this.groupOpenedAt;
        if (this.statementsInGroup >= MAX_GROUP_STATEMENTS || age >= this.intervalMs || age < 0) {
          this.commit();
        }
      }
    };
  }

  /**
   * Undoes a change that failed after it had changed rows. No savepoint per change (two more
   * statements on every write): the group is rolled back and the journal, which holds every
   * change acknowledged in it and not the failed one, is replayed. Rare: refusals come first.
   */
  private undo(): void {
    this.cancelIdle();
    this.behind.pending.discard();
    this.behind.reset();
    if (this.db.inTransaction) this.db.exec("ROLLBACK");
    this.statementsInGroup = 0;
    this.open();
  }

  /**
   * Before a statement runs. Another store on this file in this process may hold changes in its
   * group: commit it. With no group open here, another process may have acknowledged changes
   * it has not committed: open a group, which waits for a live writer's commit or replays a
   * dead one's records. So a read sees every change acknowledged before it, in any process.
   */
  beforeRead(sessionId?: string): void {
    if (this.behind.pending.size > 0 && !this.flushing) this.flush(sessionId);
    const peers = openGroups.get(this.key);
    if (peers !== undefined && peers.size > 1) this.commitPeers(peers);
    if (this.checking || !this.db.open || this.db.inTransaction) return;
    this.checking = true;
    try {
      if (this.journal.mayHoldAfter(this.readApplied())) {
        this.open();
        this.commit();
      }
    } finally {
      this.checking = false;
    }
  }

  /** Commits the open group, if any. A failure is kept and the journal replays it later. */
  commit(): void {
    this.cancelIdle();
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      this.flushing = true;
      try {
        this.behind.pending.flush();
      } finally {
        this.flushing = false;
      }
      this.statements.get(UPDATE_APPLIED).run(this.nextSeq - 1);
      this.db.exec("COMMIT");
      this.lastCommitError = null;
    } catch (error) {
      this.lastCommitError = error;
      this.behind.pending.discard();
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
    }
    this.behind.reset();
    this.statementsInGroup = 0;
  }

  /**
   * Runs the rows written behind. Should SQLite refuse them (they were checked before they were
   * journaled, so only a failing disk should), the group is rolled back and the journal, which
   * holds every change acknowledged in it, replayed in their place; the statement that needed
   * them fails (a change that did is then undone too, and never acknowledged).
   */
  private flush(sessionId?: string): void {
    this.flushing = true;
    try {
      this.behind.pending.flush(sessionId);
    } catch (error) {
      this.lastFlushError = error;
      this.undo();
      throw error;
    } finally {
      this.flushing = false;
    }
  }

  /** Commits, empties the journal when nothing in it is left to apply, and leaves the file. */
  close(): void {
    this.commit();
    openGroups.get(this.key)?.delete(this);
    if (openGroups.get(this.key)?.size === 0) openGroups.delete(this.key);
    if (this.db.open && this.lastCommitError === null) {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const applied = this.readApplied();
        if (!this.journal.mayHoldAfter(applied)) this.journal.truncate();
      } finally {
        this.db.exec("COMMIT");
      }
    }
    this.journal.close();
  }

  private append(record: RecordBuilder): void {
    try {
      this.journalEnd += this.journal.write(this.journalEnd, this.nextSeq, record);
    } catch (error) {
      // A partial record is cut short by the reader's checks: the next write goes in its place.
      if (error instanceof StoreError) throw error;
      throw new StoreError(
        "journal_failed",
        `Could not append to the commit journal ${this.journal.path}: ${(error as Error).message}`,
        {},
        { cause: error },
      );
    }
    this.nextSeq++;
    this.statementsInGroup += record.statements;
  }

  private cancelIdle(): void {
    if (this.cancelIdleCommit !== null) {
      this.cancelIdleCommit();
      this.cancelIdleCommit = null;
    }
  }

  private commitPeers(peers: Set<GroupCommit>): void {
    for (const peer of peers) if (peer !== this) peer.commit();
  }

  /** Opens a group unless one is open: BEGIN IMMEDIATE, then replay what the journal holds. */
  private open(): void {
    const peers = openGroups.get(this.key);
    if (peers !== undefined && peers.size > 1) this.commitPeers(peers);
    if (this.db.inTransaction) return;
    this.behind.reset();
    this.db.exec("BEGIN IMMEDIATE");
    try {
      let applied = this.readApplied();
      // Records the last group left that its commit does not hold: replay and commit them.
      const records = this.journal.mayHoldAfter(applied) ? this.journal.read(applied).records : [];
      if (records.length > 0) {
        applied = this.replay(records, applied);
        this.statements.get(UPDATE_APPLIED).run(applied);
        this.db.exec("COMMIT");
        this.db.exec("BEGIN IMMEDIATE");
      }
      // Everything in the file is committed now, so this group writes over it from the start.
      this.nextSeq = applied + 1;
      this.journalEnd = 0;
      this.groupOpenedAt = this.clock.now();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      throw error;
    }
    // A group ends as soon as the process has nothing else to do (or when it is intervalMs old,
    // checked on each write): other processes then wait for its lock, and see its changes, only
    // while this one is busy.
    this.cancelIdleCommit = this.clock.onIdle(() => this.commit());
  }

  private readApplied(): number {
    const row = this.statements.get(SELECT_APPLIED).get() as { applied_seq: number } | undefined;
    return row?.applied_seq ?? 0;
  }

  private replay(records: JournalRecord[], applied: number): number {
    let seq = applied;
    for (const record of records) {
      if (record.seq !== seq + 1) {
        throw new StoreError(
          "journal_corrupt",
          `The commit journal ${this.journal.path} skips from seq ${seq} to ${record.seq}; ` +
            "changes between them are missing. Move the file aside to open the database as " +
            "last committed.",
        );
      }
      try {
        for (const [sql, args] of record.statements) this.statements.get(sql).run(...args);
      } catch (error) {
        throw new StoreError(
          "journal_corrupt",
          `Replaying journal record ${record.seq} of ${this.journal.path} failed: ` +
            `${(error as Error).message}`,
          {},
          { cause: error },
        );
      }
      seq = record.seq;
    }
    return seq;
  }
}
