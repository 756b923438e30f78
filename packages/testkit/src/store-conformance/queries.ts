import type { SessionRecord, Store, TurnRecord } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import type { SuiteContext } from "./context.ts";
import { T } from "./fixtures.ts";

export function queriesSection(c: SuiteContext): void {
  describe("queries", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn } = c;
    it("lists sessions newest first with filters and stable cursor pagination", async () => {
      const X = "2024-05-01T00:00:00.000Z";
      const specs: Partial<SessionRecord>[] = [
        { id: "ses_x3", createdAt: X, labels: { env: "prod", team: "a" } },
        { id: "ses_x1", createdAt: X, labels: { env: "prod" } },
        { id: "ses_y1", createdAt: "2024-06-01T00:00:00.000Z", agentId: "agent_b" },
        { id: "ses_x4", createdAt: X, status: "ended", labels: { env: "dev", team: "a" } },
        { id: "ses_z1", createdAt: "2024-04-01T00:00:00.000Z", labels: { "app.tier": "web" } },
        { id: "ses_x2", createdAt: X, agentId: "agent_b", labels: { env: "prod", team: "a" } },
        { id: "ses_y2", createdAt: "2024-06-01T00:00:00.000Z", status: "idle" },
      ];
      for (const spec of specs) await newSession(spec);
      const order = ["ses_y2", "ses_y1", "ses_x4", "ses_x3", "ses_x2", "ses_x1", "ses_z1"];
      const ids = (rows: SessionRecord[]) => rows.map((r) => r.id);
      expect(ids(await store.listSessions({ limit: 100 }))).toEqual(order);
      const paged: string[] = [];
      let cursor: { createdAt: string; id: string } | undefined;
      for (let page = 0; page < 10; page++) {
        const rows = await store.listSessions({ limit: 2, ...(cursor ? { cursor } : {}) });
        paged.push(...ids(rows));
        if (rows.length < 2) break;
        const last = rows[rows.length - 1]!;
        cursor = { createdAt: last.createdAt, id: last.id };
      }
      expect(paged).toEqual(order);
      expect(ids(await store.listSessions({ agentId: "agent_b", limit: 100 }))).toEqual([
        "ses_y1",
        "ses_x2",
      ]);
      expect(ids(await store.listSessions({ status: "ended", limit: 100 }))).toEqual(["ses_x4"]);
      expect(ids(await store.listSessions({ labels: { env: "prod" }, limit: 100 }))).toEqual([
        "ses_x3",
        "ses_x2",
        "ses_x1",
      ]);
      expect(
        ids(await store.listSessions({ labels: { env: "prod", team: "a" }, limit: 100 })),
      ).toEqual(["ses_x3", "ses_x2"]);
      expect(ids(await store.listSessions({ labels: { "app.tier": "web" }, limit: 100 }))).toEqual([
        "ses_z1",
      ]);
      expect(ids(await store.listSessions({ labels: { env: "staging" }, limit: 100 }))).toEqual([]);
      expect(
        ids(
          await store.listSessions({
            labels: { team: "a" },
            cursor: { createdAt: X, id: "ses_x3" },
            limit: 100,
          }),
        ),
      ).toEqual(["ses_x2"]);
      expect(
        ids(await store.listSessions({ agentId: "agent_b", status: "idle", limit: 100 })),
      ).toEqual([]);
    });

    it("lists recoverable sessions: queued or running work and no live lease", async () => {
      const make = async (
        turnStatus: TurnRecord["status"] | null,
        over: Partial<SessionRecord> = {},
      ) => {
        const s = await newSession(over);
        if (turnStatus !== null) await newTurn(s.id, { status: turnStatus });
        return s.id;
      };
      const queued = await make("queued");
      const leased = await make("running");
      await store.acquireLease(leased, "rt_1", 1000, T);
      const settled = await make("completed");
      const ended = await make("queued", { status: "ended" });
      const idle = await make(null);
      const released = await make("running");
      await store.releaseLease(released, (await store.acquireLease(released, "rt_1", 60_000, T))!);
      await newTurn(settled, { status: "cancelled" });
      expect(idle).toBeTruthy();
      expect(ended).toBeTruthy();
      const at = async (now: number) => (await store.listRecoverableSessions(now)).sort();
      expect(await at(T + 500)).toEqual([queued, released].sort());
      expect(await at(T + 1000)).toEqual([queued, leased, released].sort());
    });
  });
}
