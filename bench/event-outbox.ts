// What the outbox costs a session's write path: the same commit (a message and a
// `turn.completed` event, as a turn's end writes) timed on SQLite with the trigger dropped, with
// the trigger and no subscription (the default), and with one subscription (an outbox row per
// commit); on PostgreSQL, where `oc_write` writes the outbox row itself (no trigger), without and
// with a subscription. Alternating rounds, median per commit. Run:
// node --import tsx bench/event-outbox.ts [--postgres] (PostgreSQL on a private cluster).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "@opencomputer/runtime";
import { createPostgresDeliveryStore, createPostgresStore } from "@opencomputer/store-postgres";
import { createSqliteDeliveryStore, createSqliteStore } from "@opencomputer/store-sqlite";
import { startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import {
  createdEvents,
  ev,
  messageRecord,
  sessionRecord,
  turnRecord,
} from "@opencomputer/testkit/store-fixtures";

const ROUNDS = 6;
const PER_ROUND = Number(process.env.OC_BENCH_COMMITS ?? 300);

async function commits(store: Store, n: number): Promise<number[]> {
  const s = sessionRecord();
  await store.createSession(s, createdEvents(s));
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const turn = turnRecord(s.id);
    await store.apply(s.id, { ops: [{ type: "turn.insert", turn }], events: [] });
    const start = process.hrtime.bigint();
    await store.apply(s.id, {
      ops: [{ type: "message.insert", message: messageRecord(s.id, turn.id) }],
      events: [ev("turn.completed", { outcome: "completed" }, turn.id)],
    });
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Variant {
  name: string;
  setup(): Promise<void>;
}

async function measure(
  label: string,
  store: Store,
  variants: Variant[],
  run: (n: number) => Promise<number[]> = (n) => commits(store, n),
) {
  const results = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      await v.setup();
      results.get(v.name)!.push(...(await run(PER_ROUND)));
    }
  }
  process.stdout.write(`${label}: median µs per commit (${ROUNDS}×${PER_ROUND})\n`);
  for (const [name, times] of results)
    process.stdout.write(`  ${name.padEnd(34)} ${median(times).toFixed(0)}\n`);
}

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), "oc-bench-outbox-"));
  const store = createSqliteStore({ path: join(dir, "store.db") });
  const db = store.database;
  const trigger = (
    db.prepare("SELECT sql FROM sqlite_master WHERE name = 'events_to_outbox'").get() as {
      sql: string;
    }
  ).sql;
  const deliveries = createSqliteDeliveryStore(store);
  const sub = "evs_bench";
  // The store's group commit applies rows after `apply` resolves, so also time the statement
  // itself: one event row inserted in its own transaction, as the apply step writes it.
  const s = sessionRecord();
  await store.createSession(s, createdEvents(s));
  let seq = 1_000_000;
  const insert = db.prepare(
    `INSERT INTO events (session_id, seq, id, timestamp, turn_id, type, data)
     VALUES (?, ?, ?, '2026-01-01T00:00:00.000Z', 'turn_1', 'turn.completed', '{}')`,
  );
  const one = db.transaction(() => insert.run(s.id, ++seq, `evt_${seq}`));
  const raw = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const start = process.hrtime.bigint();
      one();
      times.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    return times;
  };
  const variants: Variant[] = [
    {
      name: "no trigger",
      setup: async () => void db.exec("DROP TRIGGER IF EXISTS events_to_outbox"),
    },
    {
      name: "trigger, no subscription",
      setup: async () => {
        db.exec("DROP TRIGGER IF EXISTS events_to_outbox");
        db.exec(trigger);
        db.prepare("DELETE FROM event_subscriptions").run();
      },
    },
    {
      name: "trigger, one subscription",
      setup: async () => {
        db.prepare("DELETE FROM event_outbox").run();
        if (!(await deliveries.getSubscription(sub)))
          db.prepare(
            `INSERT INTO event_subscriptions VALUES (?, 'default', 'production', NULL,
             ',turn.completed,', 'https://x.example/', 'active', 's', NULL, NULL, '', '', NULL)`,
          ).run(sub);
      },
    },
  ];
  await measure("SQLite (file), Store.apply", store, variants);
  await measure("SQLite (file), the event INSERT in its transaction", store, variants, raw);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

async function postgres() {
  const cluster = await startPrivateCluster();
  const database = await cluster.createDatabase();
  const store = await createPostgresStore({ connectionString: cluster.connectionString(database) });
  const q = (sql: string) => store.pool.query(sql);
  const deliveries = createPostgresDeliveryStore(store);
  await measure("PostgreSQL (oc_write)", store, [
    {
      name: "no subscription",
      setup: async () => void (await q("DELETE FROM event_subscriptions")),
    },
    {
      name: "one subscription",
      setup: async () => {
        await q("DELETE FROM event_outbox");
        if (!(await deliveries.getSubscription("evs_bench")))
          await q(`INSERT INTO event_subscriptions VALUES ('evs_bench', 'default', 'production',
            NULL, ',turn.completed,', 'https://x.example/', 'active', 's', NULL, NULL, '', '', NULL)`);
      },
    },
  ]);
  await store.close();
  await cluster.stop();
}

await (process.argv.includes("--postgres") ? postgres() : sqlite());
