import type Database from "better-sqlite3";

/** Prepares each SQL text once per connection. */
export class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let stmt = this.cache.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql);
      this.cache.set(sql, stmt);
    }
    return stmt;
  }
}
