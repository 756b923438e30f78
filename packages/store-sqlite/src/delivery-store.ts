// The DeliveryStore port on the embedded store's file (migration 7). The trigger copies each
// delivered event type into `event_outbox` inside the transaction that inserts the event, and
// only while some subscription exists, so with none the write path does no extra work beyond
// one probe of an empty table per settled turn.
import { DELIVERED_TYPES_SQL, deliveryTablesDdl, SqlDeliveryStore } from "@opencomputer/sql-store";
import type { SqliteStore } from "./sqlite-store.ts";
import { sqliteExecutor } from "./trigger-store.ts";

export const DELIVERIES_V7 = `${deliveryTablesDdl({
  text: "TEXT",
  int: "INTEGER",
  json: "TEXT",
  serial: "INTEGER PRIMARY KEY",
})}
CREATE TRIGGER events_to_outbox AFTER INSERT ON events
WHEN NEW.type IN ${DELIVERED_TYPES_SQL} AND EXISTS (SELECT 1 FROM event_subscriptions)
BEGIN
  INSERT INTO event_outbox (event_id, session_id, seq, type, turn_id, occurred_at, data)
  VALUES (NEW.id, NEW.session_id, NEW.seq, NEW.type, NEW.turn_id, NEW.timestamp, NEW.data);
END;
`;

/** The event-delivery tables of `store`'s database. */
export function createSqliteDeliveryStore(store: SqliteStore): SqlDeliveryStore {
  return new SqlDeliveryStore(sqliteExecutor(store));
}
