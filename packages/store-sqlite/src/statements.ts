import { StoreError } from "@opencomputer/runtime";
import type Database from "better-sqlite3";

/**
 * Prepares each SQL text once per connection. While `recording` is set, every statement that
 * changed rows is appended to it as the JSON of `[sql, args]`: what the commit journal writes.
 * Serialised at once, so an argument array reused by the caller cannot change it afterwards.
 */
export class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();
  recording: string[] | null = null;
  /**
   * Runs before any statement is handed out: group commit commits other stores' groups on the
   * same file and replays changes another process acknowledged but did not commit.
   */
  beforeUse: (() => void) | null = null;

  constructor(private readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    this.beforeUse?.();
    let stmt = this.cache.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      if (!stmt.reader) this.record(sql, stmt);
      this.cache.set(sql, stmt);
    }
    return stmt;
  }

  private record(sql: string, stmt: Database.Statement): void {
    const run = stmt.run.bind(stmt);
    // A statement that changed nothing replays as nothing, so it is left out of the journal.
    stmt.run = ((...args: unknown[]) => {
      const info = run(...args);
      if (info.changes > 0 && this.recording !== null) this.recording.push(encode(sql, args));
      return info;
    }) as Database.Statement["run"];
  }
}

function encode(sql: string, args: unknown[]): string {
  try {
    return JSON.stringify([sql, args]);
  } catch (error) {
    throw new StoreError(
      "invalid_value",
      `A value written to the store cannot be journaled (${sql.replace(/\s+/g, " ").slice(0, 40)}…): ` +
        (error as Error).message,
    );
  }
}
