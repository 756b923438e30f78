// The DeliveryStore port on the PostgreSQL store's pool (migration 7). `oc_write` copies each
// delivered event type into `event_outbox` in the transaction that appends the event
// (OUTBOX_ROWS_OF_WRITE; a row trigger on `events` until migration 10), and only while some
// subscription exists, so with none the write path does no extra work beyond one probe of an
// empty table per settled turn.
import {
  DELIVERED_TYPES,
  DELIVERED_TYPES_SQL,
  deliveryTablesDdl,
  SqlDeliveryStore,
} from "@opencomputer/sql-store";
import type { PostgresStore } from "./postgres-store.ts";
import { postgresExecutor } from "./trigger-store.ts";

export const DELIVERIES_V7 = `${deliveryTablesDdl({
  text: 'text COLLATE "C"',
  int: "bigint",
  json: "json",
  serial: "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
})}
CREATE FUNCTION oc_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM event_subscriptions) THEN
    INSERT INTO event_outbox (event_id, session_id, seq, type, turn_id, occurred_at, data)
    VALUES (NEW.id, NEW.session_id, NEW.seq, NEW.type, NEW.turn_id, NEW.timestamp, NEW.data);
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER events_to_outbox AFTER INSERT ON events FOR EACH ROW
  WHEN (NEW.type IN ${DELIVERED_TYPES_SQL}) EXECUTE FUNCTION oc_event_outbox();
`;

/** The PL/pgSQL of `oc_write` (write-function.ts) that queues the write's delivered events. */
export const OUTBOX_ROWS_OF_WRITE = `IF p_ev_types && ARRAY[${DELIVERED_TYPES.map((t) => `'${t}'`).join(", ")}]
      AND EXISTS (SELECT 1 FROM event_subscriptions) THEN
    INSERT INTO event_outbox (event_id, session_id, seq, type, turn_id, occurred_at, data)
      SELECT e.id, p_session, base_seq + e.ord, e.type, e.turn_id, p_timestamp, e.data::json
      FROM unnest(p_ev_ids, p_ev_turns, p_ev_types, p_ev_data)
        WITH ORDINALITY AS e(id, turn_id, type, data, ord)
      WHERE e.type IN ${DELIVERED_TYPES_SQL};
  END IF;`;

/** The event-delivery tables of `store`'s database. */
export function createPostgresDeliveryStore(store: PostgresStore): SqlDeliveryStore {
  return new SqlDeliveryStore(postgresExecutor(store));
}
