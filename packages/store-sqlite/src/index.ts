export { createSqliteDeliveryStore } from "./delivery-store.ts";
export type { GroupClock } from "./group-commit.ts";
export { createSqliteMemoryStore, SqliteMemoryStore } from "./memory-store.ts";
export { SCHEMA_VERSION } from "./schema.ts";
export { createSqliteStore, SqliteStore, type SqliteStoreOptions } from "./sqlite-store.ts";
export { createSqliteTriggerStore } from "./trigger-store.ts";
export { createSqliteUsageStore } from "./usage-store.ts";
