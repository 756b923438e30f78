// The UsageStore port on PostgreSQL: `usage_steps` (migration 8) is filled by `oc_write` from the
// `usage.recorded` events it appends (USAGE_ROWS_OF_WRITE; a row trigger on `events` until
// migration 10), so every step's row commits with its event and the write stays one round trip.
import { SqlUsageStore, USAGE_COLUMNS, usageTableDdl } from "@opencomputer/sql-store";
import { toStoreError } from "./pg-errors.ts";
import type { PostgresStore } from "./postgres-store.ts";

const fromEvent = (row: string) => `${row}.session_id, ${row}.seq, ${row}.turn_id,
    ${row}.timestamp, ${row}.data->>'provider', ${row}.data->>'model',
    coalesce((${row}.data->>'inputTokens')::bigint, 0),
    coalesce((${row}.data->>'outputTokens')::bigint, 0),
    coalesce((${row}.data->>'cacheReadTokens')::bigint, 0),
    coalesce((${row}.data->>'cacheWriteTokens')::bigint, 0),
    (${row}.data->>'costUsd')::double precision`;

// Steps recorded before this migration are copied once, so a roll-up covers the whole log.
export const USAGE_V8 = `${usageTableDdl('text COLLATE "C"', "bigint", "double precision")}
CREATE FUNCTION oc_usage_steps_from_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO usage_steps (${USAGE_COLUMNS}) SELECT ${fromEvent("NEW")}
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER oc_usage_steps_from_events AFTER INSERT ON events
  FOR EACH ROW WHEN (NEW.type = 'usage.recorded') EXECUTE FUNCTION oc_usage_steps_from_event();
INSERT INTO usage_steps (${USAGE_COLUMNS})
  SELECT ${fromEvent("e")} FROM events e WHERE e.type = 'usage.recorded';
`;

/**
 * The PL/pgSQL of `oc_write` (write-function.ts) that adds a `usage_steps` row for each
 * `usage.recorded` event of the write: set-based, each event's data parsed once, and nothing at
 * all for a write without one. A step's seq is new (the session row is locked), so no conflict.
 */
export const USAGE_ROWS_OF_WRITE = `IF 'usage.recorded' = ANY (p_ev_types) THEN
    INSERT INTO usage_steps (${USAGE_COLUMNS})
      SELECT p_session, base_seq + e.ord, e.turn_id, p_timestamp, u.provider, u.model,
        coalesce(u."inputTokens", 0), coalesce(u."outputTokens", 0),
        coalesce(u."cacheReadTokens", 0), coalesce(u."cacheWriteTokens", 0), u."costUsd"
      FROM unnest(p_ev_turns, p_ev_types, p_ev_data) WITH ORDINALITY AS e(turn_id, type, data, ord)
        CROSS JOIN LATERAL json_to_record(e.data::json) AS u(provider text, model text,
          "inputTokens" bigint, "outputTokens" bigint, "cacheReadTokens" bigint,
          "cacheWriteTokens" bigint, "costUsd" double precision)
      WHERE e.type = 'usage.recorded';
  END IF;`;

/** `?` placeholders → `$1, $2, …` (the shared statements contain no other `?`). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** The usage roll-up of `store`'s database. */
export function createPostgresUsageStore(store: PostgresStore): SqlUsageStore {
  return new SqlUsageStore(
    {
      async all(sql, params) {
        try {
          const { rows } = await store.pool.query(numbered(sql), params as unknown[]);
          return rows;
        } catch (error) {
          throw toStoreError(error);
        }
      },
      run: () => Promise.reject(new Error("the usage store only reads")),
    },
    { labelValue: "(s.labels ->> ?::text)", labelParam: (key) => key },
  );
}
