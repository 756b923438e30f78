import { execFileSync } from "node:child_process";
// `npm run bench`: the performance targets of DESIGN.md ("Targets"), measured side by side in one
// process. Prints tables and writes every figure to test-output/bench.json.
//
//   npm run bench                        all benchmarks
//   npm run bench -- --only engine       one (or a comma-separated list)
//   npm run bench -- --runs 500          measured runs per latency benchmark (default 2000)
//   node --expose-gc --import tsx bench/run.ts   collects garbage between benchmarks
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { benchCluster, type ClusterResult, clusterTable, DEFAULT_WORKLOAD } from "./cluster.ts";
import { benchConcurrent, type ConcurrentResult } from "./concurrent-sessions.ts";
import { benchEngine, type EngineResult } from "./engine-run.ts";
import { benchEngineWorker } from "./engine-worker.ts";
import { benchLongSession, type LongSessionResult, longSessionTable } from "./long-session.ts";
import { mockModels } from "./mock-model.ts";
import { benchPaired } from "./paired.ts";
import { benchAiSdk, benchBare } from "./peers.ts";
import { concurrentTable, latencyTable, phaseTable, type Ratio, ratioTable } from "./report.ts";
import { loadScenario } from "./scenario.ts";
import { benchSse, type SseResult, sseTable } from "./sse.ts";
import {
  countPostgresStatements,
  countSqliteStatements,
  type StatementCount,
  statementsTable,
} from "./statements.ts";
import { collectGarbage, gcExposed, type LatencySummary } from "./stats.ts";
import { benchTracing } from "./tracing.ts";
import { benchTracingOff, type TracingOffCost } from "./tracing-off.ts";

const BENCHMARKS = [
  "bare",
  "ai-sdk",
  "engine",
  "engine-full",
  "engine-per-commit",
  "engine-worker",
  "engine-mock",
  "paired",
  "tracing",
  "concurrent",
  "long-session",
  "build",
  "cluster",
  "sse",
  "statements",
] as const;
type BenchName = (typeof BENCHMARKS)[number];

const DESCRIPTIONS: Record<BenchName, string> = {
  bare: "hand-written loop, in memory: two fake model steps and the tool call",
  "ai-sdk": "AI SDK 6 generateText + MockLanguageModelV3, stepCountIs(5), in memory",
  engine: "engine on SQLite (WAL, durability normal): create → sendTurn → waitForTurn",
  "engine-full": "the same with durability full (fsync on every journal record and commit)",
  "engine-per-commit": "engine with groupCommitMs 0: every change its own SQLite commit",
  "engine-worker": "engine with the agent's code in a worker process (IPC per render and call)",
  "engine-mock": "engine with the ai-sdk peer's model (MockLanguageModelV3) instead of the script",
  paired: "ai-sdk and engine runs alternated one by one (a noisy machine's slow spells hit both)",
  tracing:
    "engine with tracing off (default) and with OTel tracing to a counting exporter, alternated",
  concurrent: "sessions started together in one process, then all awaited",
  "long-session":
    "one session, turn after turn (--turns, default 400): p50 of the first and last turns",
  build: "opencomputer build, cold: examples/support and 20 agents × 10 tools (its own report)",
  sse: "100 SSE subscribers: events delivered/s, commit → delivery p50/p99; GET /sessions/<id> rps",
  cluster: "1, 2, 4 runtime processes on one private PostgreSQL (and SQLite): turns/s, commits",
  statements:
    "store statements per session + turn, by kind: SQLite, and PostgreSQL (private cluster)",
};

/** The build benchmark measures fresh processes, so it runs as its own script. */
function benchBuild(): string {
  const script = fileURLToPath(new URL("../packages/build/bench/build.ts", import.meta.url));
  return execFileSync(process.execPath, ["--import", "tsx", script, "--runs", "3"], {
    encoding: "utf8",
    cwd: fileURLToPath(new URL("..", import.meta.url)),
  }).trim();
}

const OUTPUT = fileURLToPath(new URL("../test-output/bench.json", import.meta.url));

function usage(): string {
  const names = BENCHMARKS.map((n) => `  ${n.padEnd(12)} ${DESCRIPTIONS[n]}`).join("\n");
  return [
    "usage: npm run bench -- [--only name[,name…]] [--runs N] [--warmup N] [--sessions N] [--turns N]",
    "                        [--cluster-sessions N] [--cluster-warmup N] [--cluster-rounds N]",
    "",
    "benchmarks:",
    names,
    "",
    "  --runs      measured runs per latency benchmark (default 2000)",
    "  --warmup    unmeasured runs before them (default 200)",
    "  --sessions  sessions in the concurrent benchmark (default 1000)",
    "  --turns     turns of the long-session benchmark (default 400)",
    `  --cluster-sessions  sessions measured per configuration of the cluster benchmark (default ${DEFAULT_WORKLOAD.sessions})`,
    `  --cluster-warmup  sessions each of its processes runs first, unmeasured (default ${DEFAULT_WORKLOAD.warmUp}); the`,
    "              `cold t/s` column is their rate",
    "  --cluster-rounds  times each throughput configuration of the cluster benchmark runs,",
    "              alternating the stores (default 3); its row is the median round",
    `  --out       where to write the JSON results (default ${OUTPUT})`,
  ].join("\n");
}

/** A mistake on the command line: reported without a stack. */
class UsageError extends Error {}

function countOption(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || (name !== "warmup" && value === 0)) {
    throw new UsageError(
      `--${name} must be a whole number${name === "warmup" ? "" : " above 0"}; got "${raw}"`,
    );
  }
  return value;
}

const OPTIONS = {
  only: { type: "string", multiple: true },
  runs: { type: "string" },
  warmup: { type: "string" },
  sessions: { type: "string" },
  turns: { type: "string" },
  "cluster-sessions": { type: "string" },
  "cluster-rounds": { type: "string" },
  "cluster-warmup": { type: "string" },
  out: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function parseOptions() {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];
  try {
    values = parseArgs({ options: OPTIONS }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    console.log(usage());
    process.exit(0);
  }
  const requested = (values.only ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
  for (const name of requested) {
    if (!(BENCHMARKS as readonly string[]).includes(name)) {
      throw new UsageError(`unknown benchmark "${name}"; choose from ${BENCHMARKS.join(", ")}`);
    }
  }
  return {
    only: new Set<BenchName>(requested.length > 0 ? (requested as BenchName[]) : BENCHMARKS),
    runs: countOption("runs", values.runs, 2000),
    warmup: countOption("warmup", values.warmup, 200),
    sessions: countOption("sessions", values.sessions, 1000),
    turns: countOption("turns", values.turns, 400),
    clusterSessions: countOption(
      "cluster-sessions",
      values["cluster-sessions"],
      DEFAULT_WORKLOAD.sessions,
    ),
    clusterWarmUp: countOption("cluster-warmup", values["cluster-warmup"], DEFAULT_WORKLOAD.warmUp),
    clusterRounds: countOption("cluster-rounds", values["cluster-rounds"], 3),
    out: values.out ?? OUTPUT,
  };
}

/** The two sides of the paired benchmark, as rows of the latency table. */
type PairedName = "paired ai-sdk" | "paired engine" | "tracing off" | "tracing on";

function ratios(latency: Partial<Record<BenchName | PairedName, LatencySummary>>): Ratio[] {
  const out: Ratio[] = [];
  const tracedOn = latency["tracing on"];
  const tracedOff = latency["tracing off"];
  if (tracedOn && tracedOff) {
    out.push({ name: "tracing: on p50 / off p50", value: tracedOn.p50Us / tracedOff.p50Us });
    out.push({ name: "tracing: on mean / off mean", value: tracedOn.meanUs / tracedOff.meanUs });
  }
  const pairedEngine = latency["paired engine"];
  const pairedAiSdk = latency["paired ai-sdk"];
  if (pairedEngine && pairedAiSdk) {
    out.push({
      name: "paired: engine p50 / ai-sdk p50",
      value: pairedEngine.p50Us / pairedAiSdk.p50Us,
      target: 1,
      stretch: 0.5,
    });
  }
  const { engine, bare } = latency;
  const full = latency["engine-full"];
  const aiSdk = latency["ai-sdk"];
  // The DESIGN target, on the scripted model; and with the same model on both sides (the AI SDK's
  // mock), which leaves only what each framework costs around it.
  for (const name of ["engine", "engine-mock"] as const) {
    const side = latency[name];
    if (side && aiSdk) {
      out.push({
        name: `${name} p50 / ai-sdk p50`,
        value: side.p50Us / aiSdk.p50Us,
        target: 1,
        stretch: 0.5,
      });
    }
  }
  if (full && aiSdk)
    out.push({ name: "engine-full p50 / ai-sdk p50", value: full.p50Us / aiSdk.p50Us });
  if (engine && bare) out.push({ name: "engine p50 / bare p50", value: engine.p50Us / bare.p50Us });
  if (aiSdk && bare) out.push({ name: "ai-sdk p50 / bare p50", value: aiSdk.p50Us / bare.p50Us });
  if (full && engine)
    out.push({ name: "engine-full p50 / engine p50", value: full.p50Us / engine.p50Us });
  const perCommit = latency["engine-per-commit"];
  if (perCommit && engine)
    out.push({ name: "engine p50 / engine-per-commit p50", value: engine.p50Us / perCommit.p50Us });
  const worker = latency["engine-worker"];
  if (worker && engine)
    out.push({ name: "engine-worker p50 / engine p50", value: worker.p50Us / engine.p50Us });
  return out;
}

async function main() {
  const opts = parseOptions();
  const scenario = loadScenario();
  const cpu = cpus();
  const machine = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: cpu[0]?.model ?? "unknown",
    cores: cpu.length,
    tmpdir: tmpdir(),
    gcExposed,
  };
  console.log(
    `node ${machine.node} on ${machine.platform}, ${machine.cores} × ${machine.cpu}` +
      `${gcExposed ? "" : " (no --expose-gc: garbage is not collected between benchmarks)"}`,
  );
  console.log(`${opts.warmup} warm-up + ${opts.runs} measured runs per latency benchmark\n`);

  const sizes = { warmup: opts.warmup, runs: opts.runs };
  const latency: Partial<Record<BenchName | PairedName, LatencySummary | EngineResult>> = {};
  let concurrent: ConcurrentResult | null = null;
  let buildReport: string | null = null;
  let cluster: ClusterResult | null = null;
  let sse: SseResult | null = null;
  let statements: StatementCount[] | null = null;
  let longSession: LongSessionResult | null = null;
  let spansPerRun: number | null = null;
  let tracingOff: TracingOffCost | null = null;

  for (const name of BENCHMARKS) {
    if (!opts.only.has(name)) continue;
    collectGarbage();
    process.stdout.write(`running ${name}: ${DESCRIPTIONS[name]} … `);
    const started = performance.now();
    if (name === "bare") latency.bare = await benchBare(scenario, sizes);
    else if (name === "ai-sdk") latency["ai-sdk"] = await benchAiSdk(scenario, sizes);
    else if (name === "engine") latency.engine = await benchEngine("normal", sizes);
    else if (name === "engine-full") latency["engine-full"] = await benchEngine("full", sizes);
    else if (name === "engine-per-commit") {
      latency["engine-per-commit"] = await benchEngine("normal", sizes, {}, { groupCommitMs: 0 });
    } else if (name === "engine-worker") latency["engine-worker"] = await benchEngineWorker(sizes);
    else if (name === "engine-mock") {
      latency["engine-mock"] = await benchEngine("normal", sizes, {
        models: mockModels(scenario),
      });
    } else if (name === "paired") {
      const paired = await benchPaired(scenario, sizes);
      latency["paired ai-sdk"] = paired.aiSdk;
      latency["paired engine"] = paired.engine;
    } else if (name === "tracing") {
      const traced = await benchTracing(sizes);
      latency["tracing off"] = traced.off;
      latency["tracing on"] = traced.on;
      spansPerRun = traced.spansPerRun;
      tracingOff = await benchTracingOff();
    } else if (name === "build") buildReport = benchBuild();
    else if (name === "cluster")
      cluster = await benchCluster({
        sessions: opts.clusterSessions,
        warmUp: opts.clusterWarmUp,
        rounds: opts.clusterRounds,
      });
    else if (name === "sse") sse = await benchSse();
    else if (name === "long-session") longSession = await benchLongSession(opts.turns);
    else if (name === "statements") {
      statements = [await countSqliteStatements(), await countPostgresStatements()];
    } else concurrent = await benchConcurrent(opts.sessions);
    console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
  }

  console.log("");
  if (Object.keys(latency).length > 0) console.log(`${latencyTable(latency)}\n`);
  const phases = phaseTable(latency);
  if (phases) console.log(`${phases}\n`);
  const computed = ratios(latency);
  if (computed.length > 0) console.log(`${ratioTable(computed)}\n`);
  if (spansPerRun !== null) console.log(`tracing on: ${spansPerRun} spans per run\n`);
  if (tracingOff !== null) {
    const off = latency["tracing off"];
    const share = off
      ? ` (${((100 * tracingOff.usPerRun) / off.p50Us).toFixed(3)} % of the off p50)`
      : "";
    console.log(
      `tracing off: ${tracingOff.callsPerRun} calls per run × ${tracingOff.nsPerCall.toFixed(1)} ns = ${tracingOff.usPerRun.toFixed(3)} µs per run${share}\n`,
    );
  }
  if (concurrent) console.log(`${concurrentTable(concurrent)}\n`);
  if (buildReport) console.log(`${buildReport}\n`);
  if (cluster) console.log(`${clusterTable(cluster)}\n`);
  if (sse) console.log(`${sseTable(sse)}\n`);
  if (statements) console.log(`${statementsTable(statements)}\n`);
  if (longSession) console.log(`${longSessionTable(longSession)}\n`);

  mkdirSync(dirname(opts.out), { recursive: true });
  const report = {
    finishedAt: new Date().toISOString(),
    machine,
    options: {
      ...sizes,
      sessions: opts.sessions,
      turns: opts.turns,
      clusterSessions: opts.clusterSessions,
      clusterRounds: opts.clusterRounds,
      clusterWarmUp: opts.clusterWarmUp,
      only: [...opts.only],
    },
    latency,
    ratios: computed,
    concurrent,
    cluster,
    sse,
    statements,
    longSession,
    spansPerRun,
    tracingOff,
  };
  writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results written to ${opts.out}`);
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`${error.message}\n\n${usage()}`);
  else console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
