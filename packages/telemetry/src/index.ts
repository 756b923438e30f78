// Public surface of @opencomputer/telemetry: the runtime's Tracing port on OpenTelemetry.

export { type TracingConfig, tracingConfig } from "./config.ts";
export { createOtlpTracing, type OtlpTracingOptions } from "./otlp-tracing.ts";
export { traceIdOf, turnSpanIdOf } from "./turn-ids.ts";
