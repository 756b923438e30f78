export {
  mergePatch,
  ownedBy,
  RESULT_INSERT_COLUMNS,
  resultValues,
  SESSION_FIELDS,
  TURN_FIELDS,
  turnUpdateRun,
} from "./batch-ops.ts";
export * from "./delivery-rows.ts";
export {
  DELIVERED_TYPES,
  DELIVERED_TYPES_SQL,
  type DeliveryDdlTypes,
  deliveryTablesDdl,
} from "./delivery-schema.ts";
export { SqlDeliveryStore } from "./delivery-store.ts";
export { newEventId } from "./event-id.ts";
export * from "./memory-rows.ts";
export * from "./row-mapping.ts";
export * from "./trigger-rows.ts";
export { type SqlExecutor, SqlTriggerStore, triggerTablesDdl } from "./trigger-store.ts";
export {
  SqlUsageStore,
  USAGE_COLUMNS,
  type UsageDialect,
  usageTableDdl,
} from "./usage-store.ts";
