// RowWriter that runs each change as its statement at once: the store without group commit
// (":memory:", or groupCommitMs 0), where every write is its own SQLite transaction.
import { type Lease, StoreError } from "@opencomputer/runtime";
import type Database from "better-sqlite3";
import { type LeaseRow, SELECT_LEASE, WRITE_LEASE } from "./lease.ts";
import {
  GUARD_SQL,
  GUARD_WITH_TURN_SQL,
  type GuardRow,
  INSERT_MESSAGE,
  INSERT_TURN,
  insertEventsSql,
  OPEN_CALLS,
  type RowWriter,
  SET_LAST_SEQ,
  UPSERT_TOOL_CALL,
  updateSessionSql,
  updateTurnSql,
} from "./row-writer.ts";
import { INSERT_SESSION } from "./rows.ts";
import type { StatementCache } from "./statements.ts";

export class SqlRowWriter implements RowWriter {
  private readonly guardOnly: Database.Statement;
  private readonly guardWithTurn: Database.Statement;

  constructor(private readonly statements: StatementCache) {
    // Read as raw arrays: one statement reads everything the guards need.
    this.guardOnly = statements.get(GUARD_SQL).raw();
    this.guardWithTurn = statements.get(GUARD_WITH_TURN_SQL).raw();
  }

  guard(sessionId: string, turnId: string | undefined): GuardRow | undefined {
    return (
      turnId === undefined
        ? this.guardOnly.get(sessionId)
        : this.guardWithTurn.get(sessionId, turnId, sessionId)
    ) as GuardRow | undefined;
  }

  readLease(sessionId: string): LeaseRow | undefined {
    return this.statements.get(SELECT_LEASE).get(sessionId) as LeaseRow | undefined;
  }

  openCalls(sessionId: string, turnId: string): string[] {
    return this.statements.get(OPEN_CALLS).pluck().all(sessionId, turnId) as string[];
  }

  insertSession(params: unknown[]): void {
    this.statements.get(INSERT_SESSION).run(params);
  }

  insertTurn(params: unknown[]): void {
    this.statements.get(INSERT_TURN).run(params);
  }

  updateTurn(sessionId: string, turnId: string, mask: number, values: unknown[], at: string) {
    const { changes } = this.statements
      .get(updateTurnSql(mask))
      .run(at, ...values, sessionId, turnId);
    if (changes === 0) {
      throw new StoreError("turn_not_active", `Session ${sessionId} has no turn ${turnId}.`);
    }
  }

  insertMessage(params: unknown[]): void {
    this.statements.get(INSERT_MESSAGE).run(params);
  }

  upsertToolCall(params: unknown[]): void {
    this.statements.get(UPSERT_TOOL_CALL).run(params);
  }

  insertEvents(params: unknown[], rows: number): void {
    this.statements.get(insertEventsSql(rows)).run(params);
  }

  updateSession(sessionId: string, lastSeq: number, at: string, mask: number, values: unknown[]) {
    this.statements.get(updateSessionSql(mask)).run(lastSeq, at, ...values, sessionId);
  }

  setLastSeq(sessionId: string, lastSeq: number): void {
    this.statements.get(SET_LAST_SEQ).run(lastSeq, sessionId);
  }

  writeLease(sessionId: string, lease: Lease): void {
    this.statements.get(WRITE_LEASE).run(lease.runtimeId, lease.epoch, lease.expiresAt, sessionId);
  }
}
