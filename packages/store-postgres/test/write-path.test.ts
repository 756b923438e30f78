// Migration 10: the rows that come with appended events (usage steps, the delivery outbox) are
// written by `oc_write` itself, and the per-row foreign keys and triggers on the write path are
// gone. Checked on a database brought to version 9 first (the triggers' era), with rows written
// then, and on the rows written after the upgrade.
import type { NewEvent } from "@opencomputer/runtime";
import { StoreError } from "@opencomputer/runtime";
import { subscriptionRow } from "@opencomputer/testkit/delivery-conformance";
import { withClient } from "@opencomputer/testkit/postgres-cluster";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { createdEvents, sessionRecord, turnRecord } from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import { describe, expect, it } from "vitest";
import {
  createPostgresDeliveryStore,
  createPostgresStore,
  type PostgresStore,
  SCHEMA_VERSION,
} from "../src/index.ts";
import { MIGRATIONS } from "../src/schema.ts";

const cluster = usePrivateCluster();

const usage = (inputTokens: number): NewEvent => ({
  type: "usage.recorded",
  data: {
    provider: "anthropic",
    model: "claude-sonnet-4.6",
    inputTokens,
    outputTokens: 7,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: null,
    pricing: "unknown",
  },
});

/** Runs `test` on a store over a fresh database at the current version, then closes it. */
async function withFreshStore(test: (store: PostgresStore, url: string) => Promise<void>) {
  const url = cluster().connectionString(await cluster().createDatabase());
  const store = await createPostgresStore({ connectionString: url });
  try {
    await test(store, url);
  } finally {
    await store.close();
  }
}

/** A database at schema version `version`, as a build of that version left it. */
async function databaseAt(version: number): Promise<string> {
  const url = cluster().connectionString(await cluster().createDatabase());
  await withClient(url, async (client) => {
    await client.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    for (let v = 0; v < version; v++) {
      await client.query(MIGRATIONS[v]!);
      await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [v + 1]);
    }
  });
  return url;
}

/** The side rows of `sessionId` next to the events they came from. */
async function sideRows(url: string, sessionId: string) {
  return withClient(url, async (client) => {
    const usageRows = await client.query(
      `SELECT u.seq::int, u.input_tokens::int, e.type FROM usage_steps u
        JOIN events e ON e.session_id = u.session_id AND e.seq = u.seq
        WHERE u.session_id = $1 ORDER BY u.seq`,
      [sessionId],
    );
    const outboxRows = await client.query(
      `SELECT o.seq::int, o.type, o.event_id = e.id AS same_id, o.data::text = e.data::text AS same_data
        FROM event_outbox o JOIN events e ON e.session_id = o.session_id AND e.seq = o.seq
        WHERE o.session_id = $1 ORDER BY o.rid`,
      [sessionId],
    );
    return { usage: usageRows.rows, outbox: outboxRows.rows };
  });
}

describe("the write path after migration 10", () => {
  it("upgrades a version 9 database: no triggers or foreign keys left, rows of both eras kept", async () => {
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(10);
    const url = await databaseAt(9);
    // Rows written by version 9's trigger, through version 9's oc_write.
    await withClient(url, async (client) => {
      await client.query(`INSERT INTO sessions (id, agent_id, deployment_id, environment, status,
          source, labels, label_index, execution_mode, result, question, runtime, revision,
          last_seq, created_at, updated_at)
        VALUES ('ses_v9', 'agent_a', 'dep_1', 'production', 'idle', 'api', '{}', '{}',
          'auto', 'null', 'null', '{}', 1, 0, '2026-01-01T00:00:00.000Z',
          '2026-01-01T00:00:00.000Z')`);
      await client.query(
        `SELECT oc_write('ses_v9', NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
          '[]', -1, NULL, $1, $2, $3, $4, '2026-01-01T00:00:01.000Z', NULL, false)`,
        [["evt_v9"], [null], ["usage.recorded"], [JSON.stringify(usage(3).data)]],
      );
    });
    const store = await createPostgresStore({ connectionString: url });
    try {
      const deliveries = createPostgresDeliveryStore(store);
      await withClient(url, async (client) => {
        const triggers = await client.query(
          "SELECT tgname FROM pg_trigger WHERE tgrelid = 'events'::regclass AND NOT tgisinternal",
        );
        expect(triggers.rows).toEqual([]);
        const keys = await client.query(
          "SELECT conname FROM pg_constraint WHERE contype = 'f' AND confrelid = 'sessions'::regclass",
        );
        expect(keys.rows).toEqual([]);
      });
      await deliveries.createSubscription(subscriptionRow());
      await store.apply("ses_v9", {
        ops: [],
        events: [usage(5), ev("turn.completed", { outcome: "completed" }, "turn_1"), usage(8)],
      });
      const rows = await sideRows(url, "ses_v9");
      // One row per usage event (none doubled by a leftover trigger), each at its event's seq.
      expect(rows.usage).toEqual([
        { seq: 1, input_tokens: 3, type: "usage.recorded" },
        { seq: 2, input_tokens: 5, type: "usage.recorded" },
        { seq: 4, input_tokens: 8, type: "usage.recorded" },
      ]);
      expect(rows.outbox).toEqual([
        { seq: 3, type: "turn.completed", same_id: true, same_data: true },
      ]);
    } finally {
      await store.close();
    }
  });

  it("writes side rows only in a write that commits", async () => {
    await withFreshStore(async (store, url) => {
      await createPostgresDeliveryStore(store).createSubscription(subscriptionRow());
      const s = sessionRecord();
      await store.createSession(s, createdEvents(s));
      const turn = turnRecord(s.id);
      await store.apply(s.id, { ops: [{ type: "turn.insert", turn }], events: [] });
      // Refused by its guard after the events would have gone in: nothing of it stays.
      const refused = await store
        .apply(s.id, {
          expectTurn: { id: turn.id, status: ["completed"] },
          ops: [],
          events: [usage(1), ev("turn.failed", { code: "x", message: "y" }, turn.id)],
        })
        .catch((e: unknown) => e);
      expect((refused as StoreError).code).toBe("turn_not_active");
      // A usage step whose tokens are not a number fails the whole write, its events included.
      const malformed = {
        type: "usage.recorded",
        data: { ...(usage(1).data as object), inputTokens: "x" },
      } as unknown as NewEvent;
      await expect(store.apply(s.id, { ops: [], events: [malformed] })).rejects.toThrow();
      expect(await sideRows(url, s.id)).toEqual({ usage: [], outbox: [] });
      expect((await store.readEvents(s.id, 0, 10)).map((e) => e.type)).toEqual(["session.created"]);
    });
  });

  it("refuses a new session's first events that would need side rows", async () => {
    await withFreshStore(async (store) => {
      for (const extra of [usage(1), ev("turn.completed", { outcome: "completed" })]) {
        const s = sessionRecord();
        const error = await store
          .createSession(s, [...createdEvents(s), extra])
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StoreError);
        expect((error as StoreError).code).toBe("invalid_batch");
        expect((error as StoreError).message).toContain(extra.type);
        expect(await store.getSession(s.id)).toBeUndefined();
      }
    });
  });
});
