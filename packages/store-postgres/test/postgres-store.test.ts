// The shared Store conformance suite plus what only a server database can show: several pools
// (processes) on one database. Runs on a private cluster this file starts (private-cluster.ts);
// each store gets a database of its own.
import type { SessionRecord, Store } from "@opencomputer/runtime";
import { StoreError } from "@opencomputer/runtime";
import { sessionRecord, storeConformance } from "@opencomputer/runtime/store-conformance";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStore, SCHEMA_VERSION } from "../src/index.ts";
import { type PrivateCluster, startPrivateCluster } from "./private-cluster.ts";

let cluster: PrivateCluster;

beforeAll(async () => {
  cluster = await startPrivateCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

storeConformance("postgres", async () => {
  const database = await cluster.createDatabase();
  return {
    store: await createPostgresStore({ connectionString: cluster.connectionString(database) }),
    cleanup: () => cluster.dropDatabase(database),
  };
});

async function createSession(store: Store, id: string): Promise<SessionRecord> {
  const { session } = await store.createSession(sessionRecord({ id }), [
    { type: "session.created", data: {} },
  ]);
  return session;
}

describe("PostgreSQL store across pools", () => {
  let database: string;
  let stores: Store[] = [];
  const open = async (schema?: string) => {
    const store = await createPostgresStore({
      connectionString: cluster.connectionString(database),
      ...(schema === undefined ? {} : { schema }),
    });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    database = await cluster.createDatabase();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    await cluster.dropDatabase(database);
  });

  it("a fence taken through one pool refuses the other pool's stale writes", async () => {
    const [a, b] = [await open(), await open()];
    await createSession(a, "ses_fence");
    const old = (await a.acquireLease("ses_fence", "rt_a", 1000, 1_000_000))!;
    const taken = (await b.acquireLease("ses_fence", "rt_b", 1000, 1_002_000))!;
    expect(taken.epoch).toBe(old.epoch + 1);
    const refused = await a
      .apply("ses_fence", { fence: old, ops: [], events: [{ type: "x", data: {} }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).code).toBe("stale_epoch");
    expect(await a.renewLease("ses_fence", old, 1000, 1_002_500)).toBeNull();
    const ok = await b.apply("ses_fence", {
      fence: taken,
      ops: [],
      events: [{ type: "y", data: {} }],
    });
    expect(ok.map((e) => e.seq)).toEqual([2]);
    expect((await a.readEvents("ses_fence", 0, 10)).map((e) => e.type)).toEqual([
      "session.created",
      "y",
    ]);
  });

  it("keeps seqs gapless under 20 concurrent applies from two pools", async () => {
    const [a, b] = [await open(), await open()];
    await createSession(a, "ses_race");
    const batches = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).apply("ses_race", {
          ops: [],
          events: [
            { type: "x", data: { i } },
            { type: "y", data: { i } },
          ],
        }),
      ),
    );
    for (const batch of batches) expect(batch[1]!.seq).toBe(batch[0]!.seq + 1);
    const seqs = batches.flat().map((e) => e.seq);
    expect(seqs.sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
    const log = await b.readEvents("ses_race", 0, 100);
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    expect((await a.getSession("ses_race"))!.lastSeq).toBe(41);
  });

  it("migrates once when three stores start at once on a fresh database", async () => {
    const fresh = await cluster.createDatabase();
    const three = await Promise.all(
      [1, 2, 3].map(() =>
        createPostgresStore({ connectionString: cluster.connectionString(fresh) }),
      ),
    );
    try {
      await createSession(three[0]!, "ses_m");
      expect(await three[2]!.getSession("ses_m")).toMatchObject({ id: "ses_m" });
      const { rows } = await three[1]!.pool.query("SELECT version FROM schema_migrations");
      expect(rows.map((r) => r.version)).toEqual(
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
    } finally {
      await Promise.all(three.map((s) => s.close()));
      await cluster.dropDatabase(fresh);
    }
  });

  it("keeps its tables in the schema it is given, created on first start", async () => {
    const [a, b] = await Promise.all([open("custom"), open("custom")]);
    await createSession(a, "ses_in_custom");
    expect(await b.getSession("ses_in_custom")).toMatchObject({ id: "ses_in_custom" });
    // Not visible through the default schema.
    expect(await (await open()).getSession("ses_in_custom")).toBeUndefined();
    const client = new pg.Client({ connectionString: cluster.connectionString(database) });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM custom.sessions");
      expect(rows[0].n).toBe(1);
    } finally {
      await client.end();
    }
  });

  it("rejects a schema name it would have to quote", async () => {
    await expect(open("Bad-Name")).rejects.toBeInstanceOf(RangeError);
  });

  it("creates one session for one idempotency key raced from two pools", async () => {
    const [a, b] = [await open(), await open()];
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) => {
        const s = { ...sessionRecord({ id: `ses_idem_${i}` }), idempotencyKey: "idem-race" };
        return (i % 2 === 0 ? a : b).createSession(s, [{ type: "session.created", data: {} }]);
      }),
    );
    expect(outcomes.filter((o) => o.created)).toHaveLength(1);
    const winner = outcomes.find((o) => o.created)!.session;
    for (const o of outcomes) expect(o.session).toStrictEqual(winner);
  });

  it("filters labels holding U+0000, which jsonb cannot store", async () => {
    const store = await open();
    const labels = { "k\u0000": "a\u0000b", plain: "x\\0" };
    await store.createSession({ ...sessionRecord({ id: "ses_nul" }), labels }, []);
    expect((await store.getSession("ses_nul"))!.labels).toStrictEqual(labels);
    const ids = async (filter: Record<string, string>) =>
      (await store.listSessions({ labels: filter, limit: 10 })).map((s) => s.id);
    expect(await ids({ "k\u0000": "a\u0000b" })).toEqual(["ses_nul"]);
    // The escaping keeps distinct strings distinct: a literal backslash-zero is not U+0000.
    expect(await ids({ plain: "x\u0000" })).toEqual([]);
    expect(await ids({ plain: "x\\0" })).toEqual(["ses_nul"]);
  });

  it("refuses to open a schema newer than this build", async () => {
    await open("future");
    const client = new pg.Client({ connectionString: cluster.connectionString(database) });
    await client.connect();
    try {
      await client.query("INSERT INTO future.schema_migrations (version) VALUES ($1)", [
        SCHEMA_VERSION + 1,
      ]);
    } finally {
      await client.end();
    }
    const error = await open("future").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe("schema_unsupported");
  });
});
