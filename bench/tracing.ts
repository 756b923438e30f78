// What tracing costs the engine loop, measured paired: two engines in one process, one with
// tracing off (the default, NO_TRACING) and one with the OpenTelemetry tracing installed
// (createOtlpTracing) exporting to an exporter that only counts spans, so the figure is the
// tracing code's own cost, not a collector's. Runs alternate one by one after both warmed up
// (which side goes first alternates too), so a slow spell of the machine hits both sides.
import { createOtlpTracing, type OtlpTracingOptions } from "@opencomputer/telemetry";
import { openEngine } from "./engine-fixture.ts";
import { assertRunEvents } from "./engine-run.ts";
import { type LatencySummary, summarize } from "./stats.ts";

export interface TracingResult {
  off: LatencySummary;
  on: LatencySummary;
  /** Spans the traced engine ended per measured run (0 would mean tracing was not on). */
  spansPerRun: number;
}

/** An exporter that keeps nothing: it counts the spans and reports success. */
function countingExporter(): NonNullable<OtlpTracingOptions["exporter"]> & { spans: number } {
  return {
    spans: 0,
    export(spans, done) {
      this.spans += spans.length;
      done({ code: 0 });
    },
    async shutdown() {},
    async forceFlush() {},
  };
}

export async function benchTracing(opts: { warmup: number; runs: number }): Promise<TracingResult> {
  const exporter = countingExporter();
  const tracing = createOtlpTracing({ env: {}, exporter });
  if (!tracing) throw new Error("createOtlpTracing returned no tracing for an explicit exporter");
  const off = await openEngine("normal");
  const on = await openEngine("normal", { tracing });
  try {
    const last = { off: "", on: "" };
    const run = async (side: "off" | "on") => {
      last[side] = (await (side === "off" ? off : on).runOnce()).sessionId;
    };
    for (let i = 0; i < opts.warmup; i++) {
      await run("off");
      await run("on");
    }
    const samples = { off: new Float64Array(opts.runs), on: new Float64Array(opts.runs) };
    const wallMs = { off: 0, on: 0 };
    const spansBefore = exporter.spans;
    for (let i = 0; i < opts.runs; i++) {
      const order = i % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
      for (const side of order) {
        const t0 = process.hrtime.bigint();
        await run(side);
        const ns = Number(process.hrtime.bigint() - t0);
        samples[side][i] = ns;
        wallMs[side] += ns / 1e6;
      }
    }
    await assertRunEvents(off.runtime, last.off);
    await assertRunEvents(on.runtime, last.on);
    const spansPerRun = (exporter.spans - spansBefore) / opts.runs;
    if (spansPerRun === 0) throw new Error("the traced engine ended no spans: tracing was not on");
    return {
      off: summarize(samples.off, opts.warmup, wallMs.off),
      on: summarize(samples.on, opts.warmup, wallMs.on),
      spansPerRun,
    };
  } finally {
    await off.close();
    await on.close();
    await tracing.close?.();
  }
}
