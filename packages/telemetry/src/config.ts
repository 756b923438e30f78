// Whether tracing is on, from the standard OpenTelemetry variables: it is when an OTLP endpoint
// is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) and neither
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise. The exporter reads the
// rest itself (headers, timeout, compression). Content (prompts, tool inputs and outputs) goes
// into spans only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the GenAI
// instrumentations' own switch.

export interface TracingConfig {
  enabled: boolean;
  /** Why it is off, for a start-up line. */
  reason: string;
  serviceName: string;
  recordContent: boolean;
  /** Where spans are sent (the traces endpoint as given, or `<endpoint>/v1/traces`). */
  url?: string;
}

export function tracingConfig(env: NodeJS.ProcessEnv = process.env): TracingConfig {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  // As the specification says: the signal's own endpoint is used as is, the general one gets
  // the signal's path appended.
  const endpoint = traces || (base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined);
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || "opencomputer-runtime";
  const recordContent = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === "true";
  const off = (reason: string): TracingConfig => ({
    enabled: false,
    reason,
    serviceName,
    recordContent,
  });
  if (env.OTEL_SDK_DISABLED === "true") return off("OTEL_SDK_DISABLED=true");
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "otlp").split(",").map((e) => e.trim());
  if (exporters.includes("none")) return off("OTEL_TRACES_EXPORTER=none");
  if (!endpoint) return off("no OTEL_EXPORTER_OTLP_ENDPOINT");
  return {
    enabled: true,
    reason: `OTLP/HTTP to ${endpoint}`,
    serviceName,
    recordContent,
    url: endpoint,
  };
}
