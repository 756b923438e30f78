// A/B of a PostgreSQL schema change under the cluster benchmark's workload (bench/cluster.ts,
// one runtime process): two databases on one private cluster, the second altered by an SQL file
// once the store has migrated it, then measured in alternation (A B, B A, A B, …) so a busy
// moment of a shared machine does not land on one side only. For changes that need no code: an
// index, a constraint, a trigger, a replaced function. Prints every round and the medians.
//
//   node --import tsx bench/pg-schema-ab.ts <change.sql> [rounds, default 6] [sessions, default 1500]
import { readFileSync } from "node:fs";
import { startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import pg from "pg";
import { DEFAULT_WORKLOAD, runConfig } from "./cluster.ts";

const [file, roundsArg, sessionsArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: node --import tsx bench/pg-schema-ab.ts <change.sql> [rounds] [sessions]");
  process.exit(2);
}
const change = readFileSync(file, "utf8");
const rounds = Number(roundsArg ?? 6);
const sessions = Number(sessionsArg ?? DEFAULT_WORKLOAD.sessions);

type Sample = { turnsPerSecond: number; runtimeMs: number; dbMs: number };
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

const cluster = await startPrivateCluster();
try {
  const a = cluster.connectionString(await cluster.createDatabase());
  const b = cluster.connectionString(await cluster.createDatabase());
  // A short run migrates each database (the store's own migrations) before B is altered.
  for (const url of [a, b])
    await runConfig("postgres", url, 1, { ...DEFAULT_WORKLOAD, sessions: 100, warmUp: 64 });
  const client = new pg.Client({ connectionString: b });
  await client.connect();
  try {
    await client.query(change);
  } finally {
    await client.end();
  }
  const samples: Record<"A" | "B", Sample[]> = { A: [], B: [] };
  for (let round = 0; round < rounds; round++) {
    const order: ["A" | "B", string][] =
      round % 2 === 0
        ? [
            ["A", a],
            ["B", b],
          ]
        : [
            ["B", b],
            ["A", a],
          ];
    for (const [side, url] of order) {
      const row = await runConfig("postgres", url, 1, { ...DEFAULT_WORKLOAD, sessions });
      const sample = {
        turnsPerSecond: row.turnsPerSecond,
        runtimeMs: row.runtimeCpuMsPerTurn,
        dbMs: row.dbCpuMsPerTurn ?? 0,
      };
      samples[side].push(sample);
      console.log(
        `${side}  ${sample.turnsPerSecond.toFixed(0)} turns/s  runtime ${sample.runtimeMs.toFixed(2)} ms  database ${sample.dbMs.toFixed(2)} ms per turn`,
      );
    }
  }
  for (const side of ["A", "B"] as const) {
    const s = samples[side];
    console.log(
      `${side} median: ${median(s.map((x) => x.turnsPerSecond)).toFixed(0)} turns/s, runtime ${median(s.map((x) => x.runtimeMs)).toFixed(2)} ms, database ${median(s.map((x) => x.dbMs)).toFixed(2)} ms per turn`,
    );
  }
} finally {
  await cluster.stop();
}
