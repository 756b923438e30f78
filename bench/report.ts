// Plain-text tables for the terminal.
import type { ConcurrentResult } from "./concurrent-sessions.ts";
import type { EngineResult } from "./engine-run.ts";
import type { LatencySummary } from "./stats.ts";

export interface Ratio {
  name: string;
  value: number;
  target?: number;
  stretch?: number;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const us = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(2));

export function latencyTable(results: Record<string, LatencySummary>): string {
  const rows = Object.entries(results).map(([name, r]) => [
    name,
    String(r.runs),
    us(r.p50Us),
    us(r.p90Us),
    us(r.p99Us),
    us(r.meanUs),
    us(r.minUs),
    us(r.maxUs),
    (r.wallMs / 1000).toFixed(2),
  ]);
  return table(
    ["benchmark", "runs", "p50 µs", "p90 µs", "p99 µs", "mean µs", "min µs", "max µs", "total s"],
    rows,
  );
}

export function phaseTable(results: Record<string, LatencySummary | EngineResult>): string {
  const rows: string[][] = [];
  for (const [name, r] of Object.entries(results)) {
    if (!("phasesP50Us" in r)) continue;
    const p = r.phasesP50Us;
    rows.push([name, us(p.create), us(p.sendTurn), us(p.waitForTurn)]);
  }
  return rows.length === 0
    ? ""
    : table(["p50 of each call", "create µs", "sendTurn µs", "waitForTurn µs"], rows);
}

export function ratioTable(ratios: Ratio[]): string {
  const rows = ratios.map((r) => {
    let verdict = "";
    if (r.target !== undefined) {
      if (r.stretch !== undefined && r.value <= r.stretch) verdict = "meets stretch";
      else verdict = r.value <= r.target ? "meets target" : "misses target";
      verdict += ` (target ≤ ${r.target}${r.stretch !== undefined ? `, stretch ${r.stretch}` : ""})`;
    }
    return [r.name, `${r.value.toFixed(2)}×`, verdict];
  });
  return table(["ratio", "value", ""], rows);
}

export function concurrentTable(r: ConcurrentResult): string {
  const peakLabel = r.peakRssScope === "window" ? "peak RSS (during)" : "peak RSS (whole process)";
  const rows: [string, string][] = [
    ["sessions", String(r.sessions)],
    ["create + sendTurn, all", `${r.startMs.toFixed(0)} ms`],
    ["then until all settled", `${r.settleMs.toFixed(0)} ms`],
    ["wall time", `${r.totalMs.toFixed(0)} ms`],
    ["throughput", `${r.sessionsPerSecond.toFixed(0)} sessions/s`],
    ["RSS before", `${r.rssBeforeMiB.toFixed(1)} MiB`],
    ["RSS after (all settled)", `${r.rssAfterMiB.toFixed(1)} MiB`],
    [peakLabel, `${r.peakRssMiB.toFixed(1)} MiB`],
    ["RSS after runtime close", `${r.rssAfterCloseMiB.toFixed(1)} MiB`],
    [
      "heap used before → after",
      `${r.heapUsedBeforeMiB.toFixed(1)} → ${r.heapUsedAfterMiB.toFixed(1)} MiB`,
    ],
  ];
  return table(["concurrent sessions", ""], rows);
}
