// How long a runtime process needs before its CPU per turn stops falling: the cluster
// benchmark's workload (bench/cluster.ts) after warm-ups of several lengths, each on a fresh
// database of one private cluster, in alternating order (short to long, then long to short) so
// a busy spell of a shared machine does not land on one length only. The cluster benchmark's
// default warm-up (`DEFAULT_WORKLOAD.warmUp`) sits where this curve levels off: a row measured
// before that point counts V8 still compiling the hot paths, and with N processes each is
// measured earlier in its life than one process is.
//
//   node --import tsx bench/warmup-curve.ts [warm-ups, default 500,1000,2000,4000,8000]
//                                           [processes, default 1] [rounds, default 2]
import { startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { DEFAULT_WORKLOAD, runConfig } from "./cluster.ts";

const [warmUpsArg, processesArg, roundsArg] = process.argv.slice(2);
const warmUps = (warmUpsArg ?? "500,1000,2000,4000,8000").split(",").map(Number);
const processes = Number(processesArg ?? 1);
const rounds = Number(roundsArg ?? 2);
if (![...warmUps, processes, rounds].every((n) => Number.isInteger(n) && n > 0)) {
  console.error("usage: node --import tsx bench/warmup-curve.ts [warm-ups] [processes] [rounds]");
  process.exit(2);
}

const runtimeMs = new Map<number, number[]>(warmUps.map((w) => [w, []]));

const cluster = await startPrivateCluster();
try {
  for (let round = 0; round < rounds; round++) {
    for (const warmUp of round % 2 === 0 ? warmUps : [...warmUps].reverse()) {
      const url = cluster.connectionString(await cluster.createDatabase());
      const row = await runConfig("postgres", url, processes, { ...DEFAULT_WORKLOAD, warmUp });
      runtimeMs.get(warmUp)!.push(row.runtimeCpuMsPerTurn);
      console.log(
        `warm-up ${String(warmUp).padStart(5)}  ${row.turnsPerSecond.toFixed(0)} turns/s  ` +
          `cold ${row.coldTurnsPerSecond.toFixed(0)} turns/s  runtime ` +
          `${row.runtimeCpuMsPerTurn.toFixed(2)} ms  database ${(row.dbCpuMsPerTurn ?? 0).toFixed(2)} ms per turn`,
      );
    }
  }
} finally {
  await cluster.stop();
}
console.log(`\nruntime CPU per turn after each warm-up, ${processes} process(es), each round:`);
for (const [warmUp, ms] of runtimeMs)
  console.log(`  ${warmUp}: ${ms.map((m) => m.toFixed(2)).join(" / ")} ms`);
