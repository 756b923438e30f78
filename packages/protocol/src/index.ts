// @opencomputer/protocol: the one definition of what the runtime writes and the API returns.
// Every producer (the engine, the gateway) and every reader (server, CLI, React hook, console)
// imports these types; none declares its own copy.

export * from "./errors.ts";
export * from "./events/catalog.ts";
export type { JsonObject, JsonValue } from "./json.ts";
export * from "./records/approval.ts";
export * from "./records/event-delivery.ts";
export * from "./records/input.ts";
export * from "./records/memory.ts";
export * from "./records/result.ts";
export * from "./records/session.ts";
export * from "./records/session-link.ts";
export * from "./records/triggers.ts";
export * from "./records/usage.ts";
export { check, type Infer, type Issue, type Shape } from "./shape.ts";
export * from "./validate.ts";
