// The pipeline's shape by how long a commit waits for its WAL flush (src/pipeline-size.ts,
// src/flush-probe.ts): one busy connection when commits return at once or the flush is quick,
// spread over backends when it is slow; given sizes win, impossible ones are refused by name
// before anything connects.
import { startPrivateCluster, withClient } from "@opencomputer/testkit/postgres-cluster";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { createPostgresStore } from "../src/create-store.ts";
import { commitFlushMs } from "../src/flush-probe.ts";
import {
  checkPipelineSize,
  commitsWaitForFlush,
  ONE_BUSY_CONNECTION,
  pipelineSize,
  QUICK_FLUSH_MS,
  SPREAD_FOR_FLUSHES,
} from "../src/pipeline-size.ts";

const fast = usePrivateCluster();

/** Client backends on the database other than `client`'s own. */
async function others(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()
       AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
  );
  return Number(rows[0]!.n);
}

/** How many backends 16 concurrent reads of a new store add to the database. */
async function backendsForReads(url: string): Promise<number> {
  return withClient(url, async (admin) => {
    const store = await createPostgresStore({ connectionString: url });
    try {
      const before = await others(admin);
      await Promise.all(Array.from({ length: 16 }, (_, i) => store.getSession(`ses_none_${i}`)));
      return (await others(admin)) - before;
    } finally {
      await store.close();
    }
  });
}

describe("pipeline size", () => {
  it("takes one busy connection unless a commit waits long for its flush", () => {
    expect(pipelineSize({}, 0)).toEqual(ONE_BUSY_CONNECTION);
    expect(pipelineSize({}, QUICK_FLUSH_MS / 2)).toEqual(ONE_BUSY_CONNECTION);
    expect(pipelineSize({}, QUICK_FLUSH_MS)).toEqual(SPREAD_FOR_FLUSHES);
    expect(pipelineSize({}, 2)).toEqual(SPREAD_FOR_FLUSHES);
    expect(pipelineSize({ fill: 4 }, 2)).toEqual({ connections: 8, fill: 4 });
    expect(pipelineSize({ connections: 1 }, 0)).toEqual({ connections: 1, fill: 32 });
  });

  it("refuses sizes no pipeline can have, naming the option", async () => {
    for (const [given, name] of [
      [{ fill: 0 }, "pipeline.fill"],
      [{ fill: 1.5 }, "pipeline.fill"],
      [{ fill: 5000 }, "pipeline.fill"],
      [{ connections: 0 }, "pipeline.connections"],
      [{ connections: Number.NaN }, "pipeline.connections"],
    ] as const) {
      expect(() => checkPipelineSize(given)).toThrow(new RegExp(`^${name.replace(".", "\\.")} `));
    }
    // Before connecting: the unreachable host is never tried.
    await expect(
      createPostgresStore({
        connectionString: "postgresql://nobody@127.0.0.1:1/none",
        pipeline: { fill: 0 },
      }),
    ).rejects.toThrow(RangeError);
  });

  it("reads from the server whether a commit waits for its WAL flush", async () => {
    const url = fast().connectionString(await fast().createDatabase());
    expect(await withClient(url, commitsWaitForFlush)).toBe(false);
    // Nothing timed when commits do not wait: the clock is never read.
    const clock = () => {
      throw new Error("timed a commit that does not wait");
    };
    expect(await withClient(url, (client) => commitFlushMs(client, { now: clock }))).toBe(0);
    const store = await createPostgresStore({ connectionString: url });
    try {
      expect(store.pipelineShape).toEqual({ ...ONE_BUSY_CONNECTION, flushMs: 0 });
    } finally {
      await store.close();
    }
    expect(await backendsForReads(url)).toBe(1);
  });

  it("times the flush on a durable server and spreads when it is slow", async () => {
    const durable = await startPrivateCluster({ durable: true });
    try {
      const db = await durable.createDatabase();
      const url = durable.connectionString(db);
      await withClient(url, async (client) => {
        expect(await commitsWaitForFlush(client)).toBe(true);
        await client.query("SET synchronous_commit = off");
        expect(await commitsWaitForFlush(client)).toBe(false);
      });
      // A slow disk, made: every flush first sleeps 3 ms (commit_delay, with no siblings needed).
      await withClient(url, (client) =>
        client
          .query(`ALTER DATABASE "${db}" SET commit_delay = 3000`)
          .then(() => client.query(`ALTER DATABASE "${db}" SET commit_siblings = 0`)),
      );
      // Three processes starting at once each time their own row: none waits for another's.
      const stores = await Promise.all(
        [0, 1, 2].map(() => createPostgresStore({ connectionString: url })),
      );
      try {
        for (const store of stores) {
          expect(store.pipelineShape).toMatchObject(SPREAD_FOR_FLUSHES);
          expect(store.pipelineShape!.flushMs).toBeGreaterThan(2.5);
        }
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
      expect(await backendsForReads(url)).toBe(8);
      // The probe's rows are gone; a shape given whole is not timed at all.
      await withClient(url, async (client) => {
        const { rows } = await client.query("SELECT pid FROM flush_probe");
        expect(rows).toEqual([]);
      });
      const given = await createPostgresStore({
        connectionString: url,
        pipeline: { connections: 2, fill: 32 },
      });
      try {
        expect(given.pipelineShape).toEqual({ connections: 2, fill: 32, flushMs: null });
      } finally {
        await given.close();
      }
    } finally {
      await durable.stop();
    }
  }, 60_000);

  it("takes the lower quartiles of the timed commits and empty round trips", async () => {
    const durable = await startPrivateCluster({ durable: true });
    try {
      const url = durable.connectionString(await durable.createDatabase());
      await createPostgresStore({ connectionString: url }).then((store) => store.close());
      // Each query is timed by two reads of the clock; empty and commit alternate, the first of
      // each (planning) is left out. Empty round trips take 1 ms, commits 3 ms but for four slow
      // ones (the median would be 40); then commits quicker than the empty round trips: 0.
      const scripted = (empty: number[], commit: number[]) => {
        let reads = 0;
        let t = 0;
        return () => {
          const read = reads++;
          if (read % 2 === 1) {
            const query = read >> 1;
            t += (query % 2 === 0 ? empty : commit)[query >> 1]!;
          }
          return t;
        };
      };
      const rounds = 7;
      const empty = [9, ...Array(rounds).fill(1)];
      const commit = [50, 3, 40, 3, 41, 45, 3, 42];
      await withClient(url, async (client) => {
        expect(await commitFlushMs(client, { rounds, now: scripted(empty, commit) })).toBe(2);
        const quick = Array(rounds + 1).fill(0.5);
        expect(await commitFlushMs(client, { rounds, now: scripted(empty, quick) })).toBe(0);
      });
    } finally {
      await durable.stop();
    }
  }, 60_000);
});
