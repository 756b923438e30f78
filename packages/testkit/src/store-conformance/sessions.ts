import type { Store } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import { expectRefused } from "./assertions.ts";
import type { SuiteContext } from "./context.ts";
import { createdEvents, ev, sessionRecord } from "./fixtures.ts";

export function sessionsSection(c: SuiteContext): void {
  describe("sessions", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession } = c;
    it("creates a session, appends its events from seq 1 and reads it back", async () => {
      const s = sessionRecord({ labels: { env: "prod" }, runtime: { region: "eu" } });
      const { session, created } = await store.createSession(s, [
        ...createdEvents(s),
        ev("session.status_changed", { from: "new", to: "idle" }),
      ]);
      expect(created).toBe(true);
      expect(session).toStrictEqual({ ...s, lastSeq: 2 });
      expect(await store.getSession(s.id)).toStrictEqual(session);
      const events = await store.readEvents(s.id, 0, 10);
      expect(events.map((e) => [e.seq, e.type, e.sessionId])).toEqual([
        [1, "session.created", s.id],
        [2, "session.status_changed", s.id],
      ]);
      expect(events[0]!.data).toStrictEqual({ agentId: "agent_a", deploymentId: "dep_1" });
      expect("turnId" in events[0]!).toBe(false);
      expect(new Date(events[0]!.timestamp).toISOString()).toBe(events[0]!.timestamp);
      expect(new Set(events.map((e) => e.id)).size).toBe(2);
      expect(events.every((e) => typeof e.id === "string" && e.id.length > 0)).toBe(true);
    });

    it("returns the existing session for a reused idempotency key and writes nothing", async () => {
      const first = await newSession({ idempotencyKey: "idem-1" });
      const again = sessionRecord({ idempotencyKey: "idem-1" });
      const replay = await store.createSession(again, createdEvents(again));
      expect(replay).toStrictEqual({ session: first, created: false });
      expect(await store.getSession(again.id)).toBeUndefined();
      expect(await store.readEvents(again.id, 0, 10)).toEqual([]);
      expect(await store.readEvents(first.id, 0, 10)).toHaveLength(1);
      // Sessions without a key never collide.
      await newSession();
      await newSession();
      expect(await store.listSessions({ limit: 10 })).toHaveLength(3);
    });

    it("scopes idempotency keys and listings to the session's project", async () => {
      const a = await newSession({ idempotencyKey: "idem-p" });
      const inB = sessionRecord({ projectId: "team-b", idempotencyKey: "idem-p" });
      // The same key in another project creates a new session; it never replays a's.
      const b = await store.createSession(inB, createdEvents(inB));
      expect(b.created).toBe(true);
      expect(b.session.projectId).toBe("team-b");
      const replayB = sessionRecord({ projectId: "team-b", idempotencyKey: "idem-p" });
      expect((await store.createSession(replayB, createdEvents(replayB))).session.id).toBe(inB.id);
      expect((await store.getSession(a.id))!.projectId).toBe("default");
      const ids = async (projectId?: string) =>
        (await store.listSessions({ limit: 10, ...(projectId ? { projectId } : {}) })).map(
          (s) => s.id,
        );
      expect(await ids("team-b")).toEqual([inB.id]);
      expect(await ids("default")).toEqual([a.id]);
      expect(await ids("nobody")).toEqual([]);
      expect((await ids()).sort()).toEqual([a.id, inB.id].sort());
    });

    it("refuses a session id already used", async () => {
      const first = await newSession();
      const clash = sessionRecord({ id: first.id, agentId: "agent_b" });
      await expectRefused(store.createSession(clash, createdEvents(clash)), "duplicate");
      expect(await store.getSession(first.id)).toStrictEqual(first);
      expect(await store.readEvents(first.id, 0, 10)).toHaveLength(1);
    });

    it("returns undefined or empty for unknown ids", async () => {
      const s = await newSession();
      expect(await store.getSession("ses_missing")).toBeUndefined();
      expect(await store.getTurn(s.id, "turn_missing")).toBeUndefined();
      expect(await store.findTurnByIdempotencyKey(s.id, "nope")).toBeUndefined();
      expect(await store.getToolCall(s.id, "call_missing")).toBeUndefined();
      expect(await store.getResult(s.id, "res_missing")).toBeUndefined();
      expect(await store.getResultByCall(s.id, "call_missing")).toBeUndefined();
      expect(await store.readEvents("ses_missing", 0, 10)).toEqual([]);
      expect(await store.listTurns("ses_missing")).toEqual([]);
    });
  });
}
