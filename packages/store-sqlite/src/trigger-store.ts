// The TriggerStore port on the embedded store's file and connection: schedule runs and webhooks
// in their own tables (migration 6), each operation one autocommitted statement run outside the
// group commit (SqliteStore.outsideGroup), so it is durable when the promise resolves.
import { type SqlExecutor, SqlTriggerStore, triggerTablesDdl } from "@opencomputer/sql-store";
import type Database from "better-sqlite3";
import { toStoreError } from "./sqlite-errors.ts";
import type { SqliteStore } from "./sqlite-store.ts";

export const TRIGGERS_V6 = triggerTablesDdl("TEXT", "INTEGER");

/** The trigger tables of `store`'s database. */
export function createSqliteTriggerStore(store: SqliteStore): SqlTriggerStore {
  return new SqlTriggerStore(sqliteExecutor(store));
}

/** Runs the shared statements on `store`'s connection, each autocommitted outside the group. */
export function sqliteExecutor(store: SqliteStore): SqlExecutor {
  const cache = new Map<string, Database.Statement>();
  const prepared = (db: Database.Database, sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
  const run = <R>(fn: (db: Database.Database) => R): Promise<R> => {
    try {
      return Promise.resolve(store.outsideGroup(fn));
    } catch (error) {
      return Promise.reject(toStoreError(error));
    }
  };
  return {
    // All the shared statements that return rows are SELECTs or … RETURNING (readers).
    all: (sql, params) =>
      run((db) => prepared(db, sql).all(...params) as Record<string, unknown>[]),
    run: (sql, params) => run((db) => prepared(db, sql).run(...params).changes),
  };
}
