export { createPostgresStore, type PostgresStoreOptions } from "./create-store.ts";
export { createPostgresDeliveryStore } from "./delivery-store.ts";
export { createPostgresMemoryStore, PostgresMemoryStore } from "./memory-store.ts";
export { channelFor } from "./notify.ts";
export {
  createPostgresSignal,
  PostgresSignal,
  type PostgresSignalOptions,
} from "./pg-signal.ts";
export { PostgresStore } from "./postgres-store.ts";
export { SCHEMA_VERSION } from "./schema.ts";
export { createPostgresTriggerStore } from "./trigger-store.ts";
export { createPostgresUsageStore } from "./usage-store.ts";
