// The runtime's Tracing port on the OpenTelemetry SDK, exported over OTLP/HTTP. Span names and
// attributes follow the GenAI semantic conventions: `invoke_agent <agent>` for a turn,
// `chat <model>` for a model call, `execute_tool <tool>` for a tool call, with `gen_ai.*`
// attributes (docs/telemetry.md lists them). Every span of a turn is in the trace its turn id
// derives (turn-ids.ts), below the turn's own span, whichever process made it.

import type {
  SettledTurn,
  SpanAttributes,
  SpanHandle,
  TraceTurn,
  Tracing,
} from "@opencomputer/runtime";
import {
  context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { type TracingConfig, tracingConfig } from "./config.ts";
import { ForcedIds } from "./forced-ids.ts";
import { traceIdOf, turnSpanIdOf } from "./turn-ids.ts";

export interface OtlpTracingOptions {
  env?: NodeJS.ProcessEnv;
  /** Replaces the OTLP exporter (tests); spans are then sent one by one, not batched. */
  exporter?: SpanExporter;
}

/** Tracing over OTLP when the environment turns it on; null (tracing off) otherwise. */
export function createOtlpTracing(options: OtlpTracingOptions = {}): Tracing | null {
  const config = tracingConfig(options.env);
  if (!config.enabled && !options.exporter) return null;
  return new OtlpTracing(config, options.exporter);
}

class OtlpTracing implements Tracing {
  readonly recordContent: boolean;
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;
  readonly #ids = new ForcedIds();

  constructor(config: TracingConfig, exporter?: SpanExporter) {
    this.recordContent = config.recordContent;
    const processor: SpanProcessor = exporter
      ? new SimpleSpanProcessor({ exporter })
      : new BatchSpanProcessor({
          exporter: new OTLPTraceExporter(config.url ? { url: config.url } : {}),
        });
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({ "service.name": config.serviceName }),
      idGenerator: this.#ids,
      spanProcessors: [processor],
    });
    this.#tracer = this.#provider.getTracer("@opencomputer/runtime");
  }

  turnRun(turn: TraceTurn): SpanHandle {
    return this.inTurn(turn, `turn.run ${turn.agentId}`, {});
  }

  inTurn(turn: TraceTurn, name: string, attributes: SpanAttributes = {}): SpanHandle {
    // The turn's span as a remote parent: its ids are known without it having been exported.
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: traceIdOf(turn.turnId),
      spanId: turnSpanIdOf(turn.turnId),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const span = this.#tracer.startSpan(
      name,
      { attributes: clean({ ...turnAttributes(turn), ...attributes }) },
      parent,
    );
    return handle(this.#tracer, span);
  }

  turnSettled(turn: SettledTurn): void {
    const ids = { traceId: traceIdOf(turn.turnId), spanId: turnSpanIdOf(turn.turnId) };
    const span = this.#ids.with(ids, () =>
      this.#tracer.startSpan(
        turn.agentId ? `invoke_agent ${turn.agentId}` : "invoke_agent",
        {
          root: true,
          startTime: new Date(turn.startedAt),
          attributes: clean({
            ...turnAttributes(turn),
            "gen_ai.operation.name": "invoke_agent",
            "opencomputer.turn.outcome": turn.outcome,
          }),
        },
        ROOT_CONTEXT,
      ),
    );
    if (turn.error) fail(span, turn.error.code, turn.error.message);
    span.end(new Date(turn.settledAt));
  }

  async close(): Promise<void> {
    await this.#provider.forceFlush();
    await this.#provider.shutdown();
  }
}

function turnAttributes(
  turn: Omit<TraceTurn, "agentId" | "deploymentId"> & Partial<TraceTurn>,
): SpanAttributes {
  return {
    "gen_ai.agent.name": turn.agentId,
    "gen_ai.conversation.id": turn.sessionId,
    "opencomputer.session.id": turn.sessionId,
    "opencomputer.turn.id": turn.turnId,
    "opencomputer.deployment.id": turn.deploymentId,
  };
}

function handle(tracer: Tracer, span: Span): SpanHandle {
  return {
    setAttributes: (attributes) => span.setAttributes(clean(attributes)),
    fail: (code, message) => fail(span, code, message),
    child(name, attributes = {}) {
      const parent = trace.setSpan(context.active(), span);
      return handle(tracer, tracer.startSpan(name, { attributes: clean(attributes) }, parent));
    },
    end: () => span.end(),
  };
}

function fail(span: Span, code: string, message: string): void {
  span.setAttribute("error.type", code);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Attributes without the undefined values the API would drop with a warning. */
function clean(attributes: SpanAttributes): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
