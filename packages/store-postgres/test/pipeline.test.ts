// The pipelined connections (src/pipeline.ts) on a private cluster: many queries in flight on one
// connection get their own answers and their own errors, a killed connection fails only what
// it had in flight and the next query opens a new one, and the setup runs on every connection.
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelinedConnections } from "../src/pipeline.ts";

let cluster: PrivateCluster;
let url: string;
let admin: pg.Client;

beforeAll(async () => {
  cluster = await startPrivateCluster();
  url = cluster.connectionString(await cluster.createDatabase());
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await cluster?.stop();
});

/** The backend pids of the database's client connections other than `admin`'s. */
async function backends(): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
  );
  return rows.map((r) => r.pid).sort();
}

describe("PipelinedConnections", () => {
  it("answers 200 concurrent queries each with its own rows, on one connection", async () => {
    const pipeline = new PipelinedConnections({ connectionString: url }, { connections: 1 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          pipeline.query<{ n: number }>({ name: "echo", text: "SELECT $1::int AS n", values: [i] }),
        ),
      );
      expect(answers.map((a) => a.rows[0]!.n)).toEqual(Array.from({ length: 200 }, (_, i) => i));
      expect(await backends()).toHaveLength(1);
    } finally {
      await pipeline.end();
    }
  });

  it("moves on to the next connection once one holds `fill` queries in flight", async () => {
    const perBackend = async (options: { connections: number; fill?: number }) => {
      const pipeline = new PipelinedConnections({ connectionString: url }, options);
      try {
        const answers = await Promise.all(
          Array.from({ length: 8 }, () =>
            pipeline.query<{ pid: number }>({ text: "SELECT pg_backend_pid() AS pid" }),
          ),
        );
        const counts = new Map<number, number>();
        for (const a of answers) counts.set(a.rows[0]!.pid, (counts.get(a.rows[0]!.pid) ?? 0) + 1);
        return [...counts.values()];
      } finally {
        await pipeline.end();
      }
    };
    expect(await perBackend({ connections: 4, fill: 2 })).toEqual([2, 2, 2, 2]);
    expect(await perBackend({ connections: 4, fill: 3 })).toEqual([3, 3, 2]);
    expect(await perBackend({ connections: 2 })).toEqual([8]);
  });

  it("fails only the query at fault: each is its own transaction", async () => {
    const pipeline = new PipelinedConnections({ connectionString: url }, { connections: 1 });
    await admin.query("CREATE TABLE IF NOT EXISTS pipe_rows (id int PRIMARY KEY)");
    try {
      const insert = (id: number) =>
        pipeline.query({ name: "insert", text: "INSERT INTO pipe_rows VALUES ($1)", values: [id] });
      const outcomes = await Promise.allSettled([insert(1), insert(1), insert(2), insert(3)]);
      expect(outcomes.map((o) => o.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      expect(((outcomes[1] as PromiseRejectedResult).reason as { code: string }).code).toBe(
        "23505",
      );
      const { rows } = await admin.query("SELECT id FROM pipe_rows ORDER BY id");
      expect(rows.map((r) => r.id)).toEqual([1, 2, 3]);
    } finally {
      await pipeline.end();
      await admin.query("DROP TABLE pipe_rows");
    }
  });

  it("opens a new connection after its backend is killed; only the queries in flight fail", async () => {
    const pipeline = new PipelinedConnections({ connectionString: url }, { connections: 1 });
    try {
      await pipeline.query({ text: "SELECT 1" });
      const [pid] = await backends();
      const inFlight = pipeline.query({ text: "SELECT pg_sleep(5)" });
      const outcome = inFlight.then(
        () => "answered",
        () => "failed",
      );
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      expect(await outcome).toBe("failed");
      const { rows } = await pipeline.query<{ pid: number }>({
        text: "SELECT pg_backend_pid() AS pid",
      });
      expect(rows[0]!.pid).not.toBe(pid);
    } finally {
      await pipeline.end();
    }
  });

  it("runs the setup statement on every connection before its queries", async () => {
    await admin.query("CREATE SCHEMA IF NOT EXISTS piped");
    const pipeline = new PipelinedConnections(
      { connectionString: url },
      { connections: 2, setup: "SET search_path TO piped" },
    );
    try {
      // Enough at once that both connections are used.
      const paths = await Promise.all(
        Array.from({ length: 40 }, () =>
          pipeline.query<{ path: string }>({
            text: "SELECT current_setting('search_path') AS path",
          }),
        ),
      );
      expect(new Set(paths.map((p) => p.rows[0]!.path))).toEqual(new Set(["piped"]));
    } finally {
      await pipeline.end();
    }
  });

  it("refuses queries once ended, and ends its connections", async () => {
    const pipeline = new PipelinedConnections({ connectionString: url }, { connections: 2 });
    await pipeline.query({ text: "SELECT 1" });
    await pipeline.end();
    await expect(pipeline.query({ text: "SELECT 1" })).rejects.toThrow(/closed/);
    expect(await backends()).toEqual([]);
  });

  it("rejects a query when it cannot connect, and connects on the next one", async () => {
    const pipeline = new PipelinedConnections(
      { connectionString: url.replace(/\/[^/?]+(\?|$)/, "/no_such_db$1") },
      { connections: 1 },
    );
    try {
      await expect(pipeline.query({ text: "SELECT 1" })).rejects.toThrow(/no_such_db/);
      await expect(pipeline.query({ text: "SELECT 1" })).rejects.toThrow(/no_such_db/);
    } finally {
      await pipeline.end();
    }
  });
});
