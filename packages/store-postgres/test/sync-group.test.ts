// Described statements sent in one tick share a Sync (src/sync-group.ts, through
// src/pipeline.ts), on a private cluster: they commit as one transaction in groups of at most
// SYNC_GROUP_LIMIT, each still gets its own rows; when one fails, every part of its group is
// answered as if it had run alone; parts that lock sessions take them in one order, so two
// processes' groups do not deadlock; a lost connection fails every part in flight.
import { withClient } from "@opencomputer/testkit/postgres-cluster";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import type pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { PipelinedConnections } from "../src/pipeline.ts";
import { SHORT_OF_CPU_GROUP_LIMIT, SYNC_GROUP_LIMIT } from "../src/sync-group.ts";

const cluster = usePrivateCluster();
let url: string;

beforeAll(async () => {
  url = cluster().connectionString(await cluster().createDatabase());
});

/** Runs `text` on a connection of its own, outside any pipeline. */
function admin(text: string, values?: unknown[]): Promise<pg.QueryResult> {
  return withClient(url, (client) => client.query(text, values));
}

/** A pipeline on one connection, given to `use` and ended after it. */
async function withPipeline<T>(
  use: (pipeline: PipelinedConnections) => Promise<T>,
  short = false,
): Promise<T> {
  const pipeline = new PipelinedConnections(
    { connectionString: url },
    { connections: 1, coreGauge: { short: () => short } },
  );
  try {
    return await use(pipeline);
  } finally {
    await pipeline.end();
  }
}

/** A described statement that answers with its number and its transaction's id. */
function txOn(pipeline: PipelinedConnections) {
  return (n: number) =>
    pipeline.query<{ n: number; tx: string }>({
      name: "tx",
      text: "SELECT $1::int AS n, txid_current()::text AS tx",
      values: [n],
    });
}

describe("SyncGroup", () => {
  it("commits one tick's described statements together, in groups, each with its own rows", async () => {
    await withPipeline(async (pipeline) => {
      const tx = txOn(pipeline);
      // The first execution describes the statement, which a group does not: it goes alone.
      await tx(-1);
      const answers = await Promise.all(
        Array.from({ length: 3 * SYNC_GROUP_LIMIT }, (_, i) => tx(i)),
      );
      expect(answers.map((a) => a.rows[0]!.n)).toEqual(
        Array.from({ length: 3 * SYNC_GROUP_LIMIT }, (_, i) => i),
      );
      // One transaction per group of SYNC_GROUP_LIMIT, in the order they were sent.
      const ids = answers.map((a) => a.rows[0]!.tx);
      expect(new Set(ids).size).toBe(3);
      for (let i = 0; i < ids.length; i++) {
        expect(ids[i]).toBe(ids[i - (i % SYNC_GROUP_LIMIT)]);
      }
      // A query without a name is not described, so it closes the open group.
      const [a, b, plain, c] = await Promise.all([
        tx(100),
        tx(101),
        pipeline.query<{ tx: string }>({ text: "SELECT txid_current()::text AS tx" }),
        tx(102),
      ]);
      expect(a.rows[0]!.tx).toBe(b.rows[0]!.tx);
      expect(new Set([a.rows[0]!.tx, plain.rows[0]!.tx, c.rows[0]!.tx]).size).toBe(3);
    });
  });

  it("groups more statements while the thread is short of CPU", async () => {
    const txids = (short: boolean) =>
      withPipeline(async (pipeline) => {
        const tx = txOn(pipeline);
        await tx(-1);
        const answers = await Promise.all(
          Array.from({ length: 2 * SHORT_OF_CPU_GROUP_LIMIT }, (_, i) => tx(i)),
        );
        return answers.map((a) => a.rows[0]!.tx);
      }, short);
    const short = await txids(true);
    expect(new Set(short).size).toBe(2);
    for (let i = 0; i < short.length; i++) {
      expect(short[i]).toBe(short[i - (i % SHORT_OF_CPU_GROUP_LIMIT)]);
    }
    const fed = await txids(false);
    expect(new Set(fed).size).toBe((2 * SHORT_OF_CPU_GROUP_LIMIT) / SYNC_GROUP_LIMIT);
  });

  it("answers every part of a failed group as if it had run alone", async () => {
    await admin("CREATE TABLE group_rows (id int PRIMARY KEY)");
    try {
      await withPipeline(async (pipeline) => {
        const insert = (id: number) =>
          pipeline.query({
            name: "insert",
            // RETURNING: a statement that returns no rows has no description to keep, so it never
            // joins a group.
            text: "INSERT INTO group_rows VALUES ($1) RETURNING id, txid_current()::text AS tx",
            values: [id],
          });
        await insert(1);
        // The third fails: the group rolls back the two before it, and the fourth never runs.
        const outcomes = await Promise.allSettled([insert(10), insert(11), insert(10), insert(12)]);
        expect(outcomes.map((o) => o.status)).toEqual([
          "fulfilled",
          "fulfilled",
          "rejected",
          "fulfilled",
        ]);
        expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: "23505" });
        expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value.rowCount : null))).toEqual([
          1,
          1,
          null,
          1,
        ]);
        // Each was answered by its own transaction, run alone after the group's rollback.
        const txs = outcomes.flatMap((o) =>
          o.status === "fulfilled" ? [o.value.rows[0]!.tx] : [],
        );
        expect(new Set(txs).size).toBe(3);
        const { rows } = await admin("SELECT id FROM group_rows ORDER BY id");
        expect(rows.map((r) => r.id)).toEqual([1, 10, 11, 12]);
        // The connection is usable after it.
        await insert(13);
      });
    } finally {
      await admin("DROP TABLE group_rows");
    }
  });

  it("sends the rest of a group when one part's value cannot be serialised", async () => {
    await withPipeline(async (pipeline) => {
      const echo = (value: unknown) =>
        pipeline.query<{ v: string; tx: string }>({
          name: "echo",
          text: "SELECT $1::text AS v, txid_current()::text AS tx",
          values: [value],
        });
      await echo("warm");
      const unserialisable = {
        toPostgres() {
          throw new Error("cannot serialise");
        },
      };
      const outcomes = await Promise.allSettled([echo("a"), echo(unserialisable), echo("b")]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe("cannot serialise");
      const [a, , b] = outcomes as PromiseFulfilledResult<pg.QueryResult>[];
      expect([a!.value.rows[0].v, b!.value.rows[0].v]).toEqual(["a", "b"]);
      expect(a!.value.rows[0].tx).toBe(b!.value.rows[0].tx);
    });
  });

  it("takes the sessions' locks in one order, so two processes' groups do not deadlock", async () => {
    // Each attempt to lock a row takes a number from a sequence, which no rollback returns: a
    // group failed by PostgreSQL's deadlock check and run again would take more than four.
    await admin(`CREATE TABLE group_locks (id text PRIMARY KEY);
      INSERT INTO group_locks VALUES ('a'), ('b');
      CREATE SEQUENCE group_attempts`);
    try {
      const lock = (pipeline: PipelinedConnections, id: string, sleep: number) =>
        pipeline.query(
          {
            name: "lock",
            text: `UPDATE group_locks SET id = id WHERE id = $1
              RETURNING nextval('group_attempts'), pg_sleep($2)`,
            values: [id, sleep],
          },
          id,
        );
      await withPipeline((one) =>
        withPipeline(async (two) => {
          await Promise.all([lock(one, "a", 0), lock(two, "a", 0)]);
          await admin("SELECT setval('group_attempts', 1, false)");
          // Sent in opposite orders, each sleeping with its first row locked: without one order
          // each group would hold the row the other waits for.
          await Promise.all([
            lock(one, "b", 0.3),
            lock(one, "a", 0),
            lock(two, "a", 0.3),
            lock(two, "b", 0),
          ]);
        }),
      );
      const { rows } = await admin("SELECT last_value FROM group_attempts");
      expect(Number(rows[0].last_value)).toBe(4);
    } finally {
      await admin("DROP TABLE group_locks; DROP SEQUENCE group_attempts");
    }
  });

  it("fails every part in flight when the connection is lost, and reconnects", async () => {
    await withPipeline(async (pipeline) => {
      const sleep = (seconds: number) =>
        pipeline.query<{ pid: number }>({
          name: "sleep",
          text: "SELECT pg_backend_pid() AS pid, pg_sleep($1)",
          values: [seconds],
        });
      const { pid } = (await sleep(0)).rows[0]!;
      const inFlight = Promise.allSettled([sleep(0), sleep(5), sleep(0)]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await admin("SELECT pg_terminate_backend($1)", [pid]);
      // Each with the server's own error, which tells the pipeline the connection is gone.
      const outcomes = await inFlight;
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
      for (const outcome of outcomes) {
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: "57P01" });
      }
      expect((await sleep(0)).rows[0]!.pid).not.toBe(pid);
    });
  });
});
