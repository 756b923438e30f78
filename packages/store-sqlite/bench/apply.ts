// Micro-benchmark: µs per `apply` of a typical engine batch (1 turn.update + 2 events, fenced,
// expectTurn) on a temp file, next to the floor on the same disk: a bare better-sqlite3
// transaction of 1 UPDATE + 2 INSERTs. Set BENCH_DIR to put the files elsewhere (e.g. /dev/shm
// to take the disk out of the figure).
// Run: node --import tsx packages/store-sqlite/bench/apply.ts [iterations]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WriteBatch } from "@opencomputer/runtime";
import { createdEvents, sessionRecord, turnRecord } from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import Database from "better-sqlite3";
import { createSqliteStore } from "../src/index.ts";

const iterations = Number(process.argv[2] ?? 20_000);
const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "oc-bench-"));

async function measure(durability: "normal" | "full", iterations: number): Promise<number[]> {
  const store = createSqliteStore({ path: join(dir, `${durability}.db`), durability });
  const now = new Date().toISOString();
  const session = sessionRecord({ id: "ses_1", status: "running", createdAt: now, updatedAt: now });
  await store.createSession(session, createdEvents(session));
  const lease = (await store.acquireLease("ses_1", "rt_1", 60_000))!;
  await store.apply("ses_1", {
    ops: [
      {
        type: "turn.insert",
        turn: turnRecord("ses_1", {
          id: "turn_1",
          input: { source: "user", text: "Where is my order A1?" },
          status: "running",
          createdAt: now,
          updatedAt: now,
          startedAt: now,
        }),
      },
    ],
    events: [],
  });

  const batch = (step: number): WriteBatch => ({
    fence: lease,
    expectTurn: { id: "turn_1", status: ["running"] },
    ops: [{ type: "turn.update", id: "turn_1", patch: { steps: step } }],
    events: [
      ev("agent.rendered", { renderId: `r${step}`, model: "m" }, "turn_1"),
      ev("message.completed", { text: "Order A1 has shipped." }, "turn_1"),
    ],
  });

  const samples: number[] = [];
  const rounds = 5;
  for (let round = 0; round <= rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) await store.apply("ses_1", batch(i));
    const us = Number(process.hrtime.bigint() - start) / 1000 / iterations;
    if (round > 0) samples.push(us); // round 0 warms up the JIT and the page cache
  }
  await store.close();
  return samples.sort((a, b) => a - b);
}

/** The floor: the same commit shape with no store logic around it. */
function measureBare(iterations: number): number[] {
  const db = new Database(join(dir, "bare.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE s (id TEXT PRIMARY KEY, n INTEGER);
    CREATE TABLE e (s TEXT, seq INTEGER, d TEXT, PRIMARY KEY (s, seq)) WITHOUT ROWID;
    INSERT INTO s VALUES ('ses_1', 0);`);
  const update = db.prepare("UPDATE s SET n = ? WHERE id = 'ses_1'");
  const insert = db.prepare("INSERT INTO e VALUES ('ses_1', ?, ?)");
  const tx = db.transaction((i: number) => {
    update.run(i);
    insert.run(2 * i, '{"renderId":"r1","model":"m"}');
    insert.run(2 * i + 1, '{"text":"Order A1 has shipped."}');
  }).immediate;
  const samples: number[] = [];
  let n = 0;
  for (let round = 0; round <= 5; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) tx(n++);
    const us = Number(process.hrtime.bigint() - start) / 1000 / iterations;
    if (round > 0) samples.push(us);
  }
  db.close();
  return samples.sort((a, b) => a - b);
}

const median = (samples: number[]) => samples[Math.floor(samples.length / 2)]!;

try {
  const bare = median(measureBare(iterations));
  // "full" fsyncs every commit: far slower, so fewer iterations.
  for (const [durability, n] of [
    ["normal", iterations],
    ["full", Math.max(100, Math.floor(iterations / 50))],
  ] as const) {
    const samples = await measure(durability, n);
    console.log(
      `apply (1 turn.update + 2 events, durability=${durability}): ` +
        `${median(samples).toFixed(1)} µs median of ${samples.length} rounds × ${n} ` +
        `(min ${samples[0]!.toFixed(1)}, max ${samples[samples.length - 1]!.toFixed(1)})` +
        (durability === "normal" ? `, ${(median(samples) / bare).toFixed(2)}× the floor` : ""),
    );
  }
  console.log(
    `floor: bare better-sqlite3 transaction, 1 UPDATE + 2 INSERTs: ${bare.toFixed(1)} µs`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
