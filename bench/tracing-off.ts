// What tracing that is off costs a run, from two measured inputs rather than a difference of two
// noisy latencies: how many Tracing and span calls one engine run makes (an engine whose tracing
// counts its calls and otherwise does what NO_TRACING does), and what such a call costs (the
// inert span's methods and the attribute objects the engine builds for them, timed in a loop of
// ten million). Their product is the run's cost of the tracing code when it is off.
import { NO_SPAN, NO_TRACING, type SpanHandle, type Tracing } from "@opencomputer/runtime";
import { openEngine } from "./engine-fixture.ts";

export interface TracingOffCost {
  /** Tracing and span calls one engine run makes with tracing off. */
  callsPerRun: number;
  /** One inert call with an attribute object built for it, in nanoseconds. */
  nsPerCall: number;
  /** Their product, in microseconds per run. */
  usPerRun: number;
}

function countingTracing(): Tracing & { calls: number } {
  const counter = { calls: 0 };
  const span: SpanHandle = {
    setAttributes() {
      counter.calls++;
    },
    fail() {
      counter.calls++;
    },
    child() {
      counter.calls++;
      return span;
    },
    end() {
      counter.calls++;
    },
  };
  return Object.assign(counter, {
    turnRun() {
      counter.calls++;
      return span;
    },
    inTurn() {
      counter.calls++;
      return span;
    },
    turnSettled() {
      counter.calls++;
    },
    recordContent: false,
    close: NO_TRACING.close,
  });
}

export async function benchTracingOff(runs = 200): Promise<TracingOffCost> {
  const tracing = countingTracing();
  const engine = await openEngine("normal", { tracing });
  try {
    for (let i = 0; i < 20; i++) await engine.runOnce();
    const before = tracing.calls;
    for (let i = 0; i < runs; i++) await engine.runOnce();
    const callsPerRun = (tracing.calls - before) / runs;
    const nsPerCall = inertCallNs();
    return { callsPerRun, nsPerCall, usPerRun: (callsPerRun * nsPerCall) / 1000 };
  } finally {
    await engine.close();
  }
}

/** An inert child call with a fresh attribute object, as the engine's step spans make. */
function inertCallNs(): number {
  const n = 10_000_000;
  let sink: SpanHandle = NO_SPAN;
  for (let round = 0; round < 2; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) sink = sink.child("step", { "opencomputer.step": i });
    const ns = Number(process.hrtime.bigint() - t0) / n;
    if (round === 1) return ns;
  }
  return Number.NaN;
}
