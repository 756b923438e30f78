// The TriggerStore port on the PostgreSQL store's pool: schedule runs and webhooks in their own
// tables (migration 6). Every operation is one statement on any pooled connection; the unique
// indexes decide races between processes.
import { type SqlExecutor, SqlTriggerStore, triggerTablesDdl } from "@opencomputer/sql-store";
import { toStoreError } from "./pg-errors.ts";
import type { PostgresStore } from "./postgres-store.ts";

export const TRIGGERS_V6 = triggerTablesDdl('text COLLATE "C"', "bigint");

/** `?` placeholders → `$1, $2, …` (the shared statements contain no other `?`). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** The trigger tables of `store`'s database. */
export function createPostgresTriggerStore(store: PostgresStore): SqlTriggerStore {
  return new SqlTriggerStore(postgresExecutor(store));
}

/** Runs the shared statements (with `?` placeholders) on `store`'s pool. */
export function postgresExecutor(store: PostgresStore): SqlExecutor {
  const texts = new Map<string, string>();
  const text = (sql: string) => {
    let out = texts.get(sql);
    if (out === undefined) {
      out = numbered(sql);
      texts.set(sql, out);
    }
    return out;
  };
  return {
    async all(sql, params) {
      try {
        const { rows } = await store.pool.query(text(sql), params as unknown[]);
        return rows;
      } catch (error) {
        throw toStoreError(error);
      }
    },
    async run(sql, params) {
      try {
        const { rowCount } = await store.pool.query(text(sql), params as unknown[]);
        return rowCount ?? 0;
      } catch (error) {
        throw toStoreError(error);
      }
    },
  };
}
