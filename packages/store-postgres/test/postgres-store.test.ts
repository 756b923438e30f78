// The shared Store conformance suite plus what only a server database can show: several pools
// (processes) on one database. Runs on a private cluster this file starts (@opencomputer/testkit/postgres-cluster);
// each store gets a database of its own.
import type { SessionRecord, Store } from "@opencomputer/runtime";
import { StoreError } from "@opencomputer/runtime";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import {
  sessionRecord,
  storeConformance,
  turnRecord,
} from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStore, type PostgresStore, SCHEMA_VERSION } from "../src/index.ts";

const cluster = usePrivateCluster();

storeConformance("postgres", async () => {
  const database = await cluster().createDatabase();
  return {
    store: await createPostgresStore({ connectionString: cluster().connectionString(database) }),
    cleanup: () => cluster().dropDatabase(database),
  };
});

// The same suite with every statement on the pool, as with `pipeline: false`.
storeConformance("postgres, pooled", async () => {
  const database = await cluster().createDatabase();
  return {
    store: await createPostgresStore({
      connectionString: cluster().connectionString(database),
      pipeline: false,
    }),
    cleanup: () => cluster().dropDatabase(database),
  };
});

async function createSession(store: Store, id: string): Promise<SessionRecord> {
  const { session } = await store.createSession(sessionRecord({ id }), [
    { type: "session.created", data: { agentId: "agent_a", deploymentId: "dep_1" } },
  ]);
  return session;
}

describe("PostgreSQL store across pools", () => {
  let database: string;
  let stores: Store[] = [];
  const open = async (schema?: string) => {
    const store = await createPostgresStore({
      connectionString: cluster().connectionString(database),
      ...(schema === undefined ? {} : { schema }),
    });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    database = await cluster().createDatabase();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
    await cluster().dropDatabase(database);
  });

  it("a fence taken through one pool refuses the other pool's stale writes", async () => {
    const [a, b] = [await open(), await open()];
    await createSession(a, "ses_fence");
    const old = (await a.acquireLease("ses_fence", "rt_a", 1000, 1_000_000))!;
    const taken = (await b.acquireLease("ses_fence", "rt_b", 1000, 1_002_000))!;
    expect(taken.epoch).toBe(old.epoch + 1);
    const refused = await a
      .apply("ses_fence", { fence: old, ops: [], events: [ev("x", {})] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).code).toBe("stale_epoch");
    expect(await a.renewLease("ses_fence", old, 1000, 1_002_500)).toBeNull();
    const ok = await b.apply("ses_fence", {
      fence: taken,
      ops: [],
      events: [ev("y", {})],
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
          events: [ev("x", { i }), ev("y", { i })],
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
    const fresh = await cluster().createDatabase();
    const three = await Promise.all(
      [1, 2, 3].map(() =>
        createPostgresStore({ connectionString: cluster().connectionString(fresh) }),
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
      await cluster().dropDatabase(fresh);
    }
  });

  it("keeps its tables in the schema it is given, created on first start", async () => {
    const [a, b] = await Promise.all([open("custom"), open("custom")]);
    await createSession(a, "ses_in_custom");
    expect(await b.getSession("ses_in_custom")).toMatchObject({ id: "ses_in_custom" });
    // Not visible through the default schema.
    expect(await (await open()).getSession("ses_in_custom")).toBeUndefined();
    const client = new pg.Client({ connectionString: cluster().connectionString(database) });
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
        return (i % 2 === 0 ? a : b).createSession(s, [
          { type: "session.created", data: { agentId: "agent_a", deploymentId: "dep_1" } },
        ]);
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
    const client = new pg.Client({ connectionString: cluster().connectionString(database) });
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

describe("PostgreSQL store round trips", () => {
  let database: string;
  let store: PostgresStore;
  let other: pg.Client;
  const sent: string[] = [];
  let listening = false;
  let restore = () => {};
  let serial = 0;

  beforeAll(async () => {
    database = await cluster().createDatabase();
    store = await createPostgresStore({ connectionString: cluster().connectionString(database) });
    // Every statement any connection sends while `statementsOf` listens, in order: the
    // store's pipelined connections and its pool alike go through Client#query.
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const query = proto.query;
    proto.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text: string };
      if (listening) sent.push((typeof q === "string" ? q : q.text).trim().split(/\s+/)[0]!);
      return query.apply(this, args);
    };
    restore = () => {
      proto.query = query;
    };
    other = new pg.Client({ connectionString: cluster().connectionString(database) });
    await other.connect();
  });
  afterAll(async () => {
    restore();
    await other?.end();
    await store?.close();
    await cluster().dropDatabase(database);
  });

  async function sessionWithTurn(): Promise<{ sessionId: string; turnId: string }> {
    const { id: sessionId } = await createSession(store, `ses_rt_${++serial}`);
    const turn = turnRecord(sessionId, { id: `turn_${sessionId}` });
    await store.apply(sessionId, {
      ops: [{ type: "turn.insert", turn }],
      events: [{ type: "turn.queued", data: { mode: "queue" }, turnId: turn.id }],
    });
    return { sessionId, turnId: turn.id };
  }

  async function statementsOf(write: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0;
    listening = true;
    try {
      await write();
    } finally {
      listening = false;
    }
    return [...sent];
  }

  it("creates a session, its events and the read back in one round trip", async () => {
    const id = `ses_rt_${++serial}`;
    expect(await statementsOf(() => createSession(store, id))).toEqual(["WITH"]);
    expect((await store.getSession(id))!.lastSeq).toBe(1);
    expect((await store.readEvents(id, 0, 10)).map((e) => e.type)).toEqual(["session.created"]);
  });

  it("sends a guarded write, with or without a lease claim, as one call of oc_write", async () => {
    const { sessionId, turnId } = await sessionWithTurn();
    const apply = await statementsOf(() =>
      store.apply(sessionId, {
        expectTurn: { id: turnId, status: ["queued"] },
        ops: [{ type: "turn.update", id: turnId, patch: { status: "running" } }],
        events: [{ type: "turn.started", data: {}, turnId }],
      }),
    );
    // Lock, guard, op, events, session row and NOTIFY: one statement, its own transaction.
    expect(apply).toEqual(["SELECT"]);
    const leased = await statementsOf(() =>
      store.applyWithLease(sessionId, "rt_a", 1000, {
        expectTurn: { id: turnId, status: ["running"] },
        ops: [],
        events: [ev("x", {}, turnId)],
      }),
    );
    expect(leased).toEqual(["SELECT"]);
    const session = (await store.getSession(sessionId))!;
    expect(session.lease).toMatchObject({ runtimeId: "rt_a", epoch: 1 });
    expect(session.lastSeq).toBe(4);
    expect((await store.getTurn(sessionId, turnId))!.status).toBe("running");
  });

  it("guards on the turn as the writer it waited for committed it", async () => {
    const { sessionId, turnId } = await sessionWithTurn();
    // A writer holding the session lock starts the turn, as oc_write would.
    await other.query("BEGIN");
    await other.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [sessionId]);
    await other.query("UPDATE turns SET status = 'running' WHERE session_id = $1 AND id = $2", [
      sessionId,
      turnId,
    ]);
    await other.query("UPDATE sessions SET revision = revision + 1 WHERE id = $1", [sessionId]);
    const waiting = store
      .apply(sessionId, {
        expectTurn: { id: turnId, status: ["queued"] },
        ops: [],
        events: [ev("x", {})],
      })
      .catch((e: unknown) => e);
    // Its statement snapshot predates the commit below: only the lock wait separates them.
    for (let i = 0; ; i++) {
      const { rows } = await store.pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (rows[0].n > 0) break;
      if (i > 200) throw new Error("the apply never waited for the lock");
      await new Promise((r) => setTimeout(r, 10));
    }
    await other.query("COMMIT");
    const refused = await waiting;
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).code).toBe("turn_not_active");
    expect((refused as StoreError).message).toBe(`Turn ${turnId} is running, expected queued.`);
  });
});
