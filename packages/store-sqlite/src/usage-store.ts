// The UsageStore port on the embedded store: `usage_steps` (migration 8) is filled by a trigger
// on `events`, so a step's row is written by the same statement, and journaled and replayed with
// the same group, as its `usage.recorded` event. Reads commit the open group first
// (SqliteStore.outsideGroup), so they see every acknowledged step.
import { SqlUsageStore, USAGE_COLUMNS, usageTableDdl } from "@opencomputer/sql-store";
import type Database from "better-sqlite3";
import { toStoreError } from "./sqlite-errors.ts";
import type { SqliteStore } from "./sqlite-store.ts";

const fromEvent = (row: string) => `${row}.session_id, ${row}.seq, ${row}.turn_id,
    ${row}.timestamp, json_extract(${row}.data, '$.provider'), json_extract(${row}.data, '$.model'),
    coalesce(json_extract(${row}.data, '$.inputTokens'), 0),
    coalesce(json_extract(${row}.data, '$.outputTokens'), 0),
    coalesce(json_extract(${row}.data, '$.cacheReadTokens'), 0),
    coalesce(json_extract(${row}.data, '$.cacheWriteTokens'), 0),
    json_extract(${row}.data, '$.costUsd')`;

// Steps recorded before this migration are copied once, so a roll-up covers the whole log.
export const USAGE_V8 = `${usageTableDdl("TEXT", "INTEGER", "REAL")}
CREATE TRIGGER oc_usage_steps_from_events AFTER INSERT ON events
  WHEN NEW.type = 'usage.recorded'
BEGIN
  INSERT OR REPLACE INTO usage_steps (${USAGE_COLUMNS}) SELECT ${fromEvent("NEW")};
END;
INSERT INTO usage_steps (${USAGE_COLUMNS})
  SELECT ${fromEvent("e")} FROM events e WHERE e.type = 'usage.recorded';
`;

/** The usage roll-up of `store`'s database. */
export function createSqliteUsageStore(store: SqliteStore): SqlUsageStore {
  const cache = new Map<string, Database.Statement>();
  return new SqlUsageStore(
    {
      all: (sql, params) => {
        try {
          const rows = store.outsideGroup((db) => {
            let statement = cache.get(sql);
            if (!statement) {
              statement = db.prepare(sql);
              cache.set(sql, statement);
            }
            return statement.all(...params) as Record<string, unknown>[];
          });
          return Promise.resolve(rows);
        } catch (error) {
          return Promise.reject(toStoreError(error));
        }
      },
      run: () => Promise.reject(new Error("the usage store only reads")),
    },
    { labelValue: "json_extract(s.labels, ?)", labelParam: (key) => `$."${key}"` },
  );
}
