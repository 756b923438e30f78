import type Database from "better-sqlite3";
import type { RecordBuilder } from "./journal-codec.ts";

/**
 * Prepares each SQL text once per connection. While `recording` is set, every statement that
 * changed rows is added to it with its arguments: the commit journal's record of the change.
 * Encoded at once, so an argument array reused by the caller cannot change it afterwards.
 */
export class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();
  recording: RecordBuilder | null = null;
  /**
   * Runs before any statement is handed out: group commit commits other stores' groups on the
   * same file, replays changes another process acknowledged but did not commit, and runs the
   * rows it wrote behind (those of `sessionId` only, when the statement is about one session).
   */
  beforeUse: ((sessionId?: string) => void) | null = null;

  constructor(private readonly db: Database.Database) {}

  /** The statement for `sql`; `sessionId` when it reads or writes only that session's rows. */
  get(sql: string, sessionId?: string): Database.Statement {
    this.beforeUse?.(sessionId);
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
      if (info.changes > 0 && this.recording !== null) this.recording.add(sql, args);
      return info;
    }) as Database.Statement["run"];
  }
}
