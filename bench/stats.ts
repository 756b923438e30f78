// Timing and summary helpers shared by the benchmarks. Samples are taken with
// process.hrtime.bigint() (nanoseconds, monotonic) and reported in microseconds.

export interface LatencySummary {
  runs: number;
  warmup: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  meanUs: number;
  minUs: number;
  maxUs: number;
  /** Wall time of the measured runs only, in milliseconds (performance.now()). */
  wallMs: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samplesNs: Float64Array, warmup: number, wallMs: number): LatencySummary {
  const sorted = Float64Array.from(samplesNs).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  const us = (ns: number) => ns / 1000;
  return {
    runs: sorted.length,
    warmup,
    p50Us: us(percentile(sorted, 50)),
    p90Us: us(percentile(sorted, 90)),
    p99Us: us(percentile(sorted, 99)),
    meanUs: us(sum / sorted.length),
    minUs: us(sorted[0] ?? Number.NaN),
    maxUs: us(sorted[sorted.length - 1] ?? Number.NaN),
    wallMs,
  };
}

/**
 * Runs `once` `warmup` times unmeasured, then `runs` times one after another, timing each run on
 * its own. Runs are sequential on purpose: the figure is the latency of one run, not throughput.
 */
export async function measure(
  once: () => Promise<unknown>,
  opts: { warmup: number; runs: number },
): Promise<LatencySummary> {
  for (let i = 0; i < opts.warmup; i++) await once();
  const samples = new Float64Array(opts.runs);
  const start = performance.now();
  for (let i = 0; i < opts.runs; i++) {
    const t0 = process.hrtime.bigint();
    await once();
    samples[i] = Number(process.hrtime.bigint() - t0);
  }
  const wallMs = performance.now() - start;
  return summarize(samples, opts.warmup, wallMs);
}

const gc = (globalThis as { gc?: () => void }).gc;

/** True when the process was started with --expose-gc. */
export const gcExposed = typeof gc === "function";

/** Collects garbage between benchmarks when --expose-gc is on, so one's garbage is not billed to the next. */
export function collectGarbage(): void {
  if (gc) {
    gc();
    gc();
  }
}

export function mib(bytes: number): number {
  return bytes / (1024 * 1024);
}
