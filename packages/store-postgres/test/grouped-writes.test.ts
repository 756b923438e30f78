// The store's writes when several share a commit (src/sync-group.ts): sessions written in the
// same tick go under one Sync, and a fenced write among them is refused on its own while the
// others commit, each session's seqs gapless.
import { type Lease, StoreError } from "@opencomputer/runtime";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { createdEvents, sessionRecord } from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPostgresStore, type PostgresStore } from "../src/index.ts";

const cluster = usePrivateCluster();
const T = 1_700_000_000_000;

/** How many statements went in groups of two or more, counted where node-postgres sends. */
let grouped = 0;
const clientProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const query = clientProto.query;
beforeEach(() => {
  grouped = 0;
  clientProto.query = function (this: pg.Client, ...args: unknown[]) {
    const statements = (args[0] as { statements?: number } | null)?.statements ?? 1;
    if (statements > 1) grouped += statements;
    return query.apply(this, args);
  };
});
afterEach(() => {
  clientProto.query = query;
});

async function withStore(test: (store: PostgresStore) => Promise<void>): Promise<void> {
  const url = cluster().connectionString(await cluster().createDatabase());
  const store = await createPostgresStore({ connectionString: url, notify: false });
  try {
    await test(store);
  } finally {
    await store.close();
  }
}

describe("writes sharing a commit", () => {
  it("refuses a fenced write alone; the others in its group commit, seqs gapless", async () => {
    await withStore(async (store) => {
      const sessions: string[] = [];
      for (let i = 0; i < 4; i++) {
        const s = sessionRecord();
        await store.createSession(s, createdEvents(s));
        sessions.push(s.id);
      }
      const leases: Lease[] = [];
      for (const id of sessions) leases.push((await store.acquireLease(id, "rt_1", 60_000, T))!);
      // The second session's lease moves on: its old lease is stale.
      const moved = (await store.acquireLease(sessions[1]!, "rt_2", 60_000, T + 60_001))!;
      // A first write describes `oc_write` on the connection; only then do writes share a Sync.
      await store.apply(sessions[0]!, { fence: leases[0]!, ops: [], events: [ev("warm")] });
      grouped = 0;
      const outcomes = await Promise.allSettled(
        sessions.map((id, i) =>
          store.apply(id, { fence: leases[i]!, ops: [], events: [ev("a"), ev("b")] }),
        ),
      );
      expect(grouped).toBe(4);
      expect(outcomes.map((o) => o.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      const refused = (outcomes[1] as PromiseRejectedResult).reason;
      expect(refused).toBeInstanceOf(StoreError);
      expect(refused.code).toBe("stale_epoch");
      // Every session's log: gapless, the refused write absent, the others exactly once.
      const logs = await Promise.all(sessions.map((id) => store.readEvents(id, 0, 100)));
      expect(logs.map((log) => log.map((e) => `${e.seq}:${e.type}`))).toEqual([
        ["1:session.created", "2:warm", "3:a", "4:b"],
        ["1:session.created"],
        ["1:session.created", "2:a", "3:b"],
        ["1:session.created", "2:a", "3:b"],
      ]);
      // The session whose write was refused takes the next one from its new holder at seq 2.
      const next = await store.apply(sessions[1]!, { fence: moved, ops: [], events: [ev("c")] });
      expect(next.map((e) => e.seq)).toEqual([2]);
    });
  });
});
