// The pipeline's shape by the server's commit settings (src/pipeline-size.ts): one busy
// connection when commits return at once, spread over backends when each waits for its WAL
// flush; given sizes win, impossible ones are refused by name before anything connects.
import { startPrivateCluster, withClient } from "@opencomputer/testkit/postgres-cluster";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import {
  checkPipelineSize,
  commitsWaitForFlush,
  ONE_BUSY_CONNECTION,
  pipelineSize,
  SPREAD_FOR_FLUSHES,
} from "../src/pipeline-size.ts";
import { createPostgresStore } from "../src/postgres-store.ts";

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
  it("takes one busy connection when commits return at once, spreads when they wait", () => {
    expect(pipelineSize({}, false)).toEqual(ONE_BUSY_CONNECTION);
    expect(pipelineSize({}, true)).toEqual(SPREAD_FOR_FLUSHES);
    expect(pipelineSize({ fill: 4 }, true)).toEqual({ connections: 8, fill: 4 });
    expect(pipelineSize({ connections: 1 }, false)).toEqual({ connections: 1, fill: 32 });
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
    const durable = await startPrivateCluster({ durable: true });
    try {
      const durableUrl = durable.connectionString(await durable.createDatabase());
      await withClient(durableUrl, async (client) => {
        expect(await commitsWaitForFlush(client)).toBe(true);
        await client.query("SET synchronous_commit = off");
        expect(await commitsWaitForFlush(client)).toBe(false);
      });
      // The store follows: 16 reads at once on 8 connections filled to 2, or on one.
      expect(await backendsForReads(durableUrl)).toBe(8);
      expect(await backendsForReads(url)).toBe(1);
    } finally {
      await durable.stop();
    }
  }, 60_000);
});
