import type { ApprovalRecord, Store } from "@opencomputer/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import { expectRefused } from "./assertions.ts";
import type { SuiteContext } from "./context.ts";
import { ev, OLD, uid } from "./fixtures.ts";

export function approvalsSection(c: SuiteContext): void {
  describe("approvals", () => {
    let store: Store;
    beforeEach(() => {
      store = c.store();
    });
    const { newSession, newTurn, snapshot } = c;
    function approval(
      sessionId: string,
      turnId: string,
      over: Partial<ApprovalRecord> = {},
    ): ApprovalRecord {
      return {
        id: uid("apr"),
        sessionId,
        turnId,
        toolCallId: uid("call"),
        agentId: "agent_a",
        deploymentId: "dep_1",
        tool: "attach",
        input: { customerId: "c1", planId: "pro" },
        card: { title: "Move c1 to pro", facts: [{ label: "Today", value: "basic" }] },
        digest: "sha256:cc",
        status: "pending",
        decision: null,
        outcome: null,
        error: null,
        attempts: 0,
        claimedBy: null,
        claimedAt: null,
        createdAt: OLD,
        updatedAt: OLD,
        ...over,
      };
    }

    it("inserts, reads back unchanged, and lists by session and by status", async () => {
      const s = await newSession();
      const turn = await newTurn(s.id);
      const a = approval(s.id, turn.id);
      const b = approval(s.id, turn.id, { status: "approved" });
      await store.apply(s.id, {
        ops: [
          { type: "approval.insert", approval: a },
          { type: "approval.insert", approval: b },
        ],
        events: [ev("approval.requested")],
      });
      expect(await store.getApproval(a.id)).toEqual(a);
      expect((await store.listApprovals(s.id)).map((x) => x.id)).toEqual([a.id, b.id]);
      expect((await store.listApprovalsByStatus(["approved"], 10)).map((x) => x.id)).toEqual([
        b.id,
      ]);
      expect(await store.listApprovalsByStatus([], 10)).toEqual([]);
      expect(await store.getApproval("apr_missing")).toBeUndefined();
    });

    it("updates only from an expected status, atomically with the batch", async () => {
      const s = await newSession();
      const turn = await newTurn(s.id);
      const a = approval(s.id, turn.id);
      await store.apply(s.id, { ops: [{ type: "approval.insert", approval: a }], events: [] });
      const decision = { id: "dec_1", decidedAt: OLD, decidedBy: "ana" };
      await store.apply(s.id, {
        ops: [
          {
            type: "approval.update",
            id: a.id,
            expect: ["pending"],
            patch: { status: "approved", decision },
          },
        ],
        events: [ev("approval.decided")],
      });
      const before = await snapshot(s.id);
      // A second decision, or one for an unknown approval, is refused and writes nothing.
      for (const id of [a.id, "apr_missing"]) {
        await expectRefused(
          store.apply(s.id, {
            ops: [
              { type: "session.update", patch: { status: "running" } },
              { type: "approval.update", id, expect: ["pending"], patch: { status: "denied" } },
            ],
            events: [ev("approval.decided")],
          }),
          "approval_state",
        );
      }
      expect(await snapshot(s.id)).toStrictEqual(before);
      const read = (await store.getApproval(a.id))!;
      expect(read).toMatchObject({ status: "approved", decision });
      await store.apply(s.id, {
        ops: [
          {
            type: "approval.update",
            id: a.id,
            expect: ["approved", "unconfirmed"],
            patch: { status: "applying", attempts: 1, claimedBy: "rt_1", claimedAt: OLD },
          },
        ],
        events: [],
      });
      await store.apply(s.id, {
        ops: [
          {
            type: "approval.update",
            id: a.id,
            expect: ["applying"],
            patch: { status: "applied", outcome: { ok: 1 } },
          },
        ],
        events: [],
      });
      expect(await store.getApproval(a.id)).toMatchObject({
        status: "applied",
        outcome: { ok: 1 },
        attempts: 1,
        claimedBy: "rt_1",
      });
    });

    it("lists only sessions waiting for a person: an open question or a pending or unconfirmed approval", async () => {
      const projectId = uid("prj");
      const at = (n: number) => `2021-01-01T00:00:0${n}.000Z`;
      const asking = await newSession({ projectId, createdAt: at(1) });
      const pending = await newSession({ projectId, createdAt: at(2) });
      const unconfirmed = await newSession({ projectId, createdAt: at(3) });
      const settled = await newSession({ projectId, createdAt: at(4) });
      const plain = await newSession({ projectId, createdAt: at(5) });
      await store.apply(asking.id, {
        ops: [{ type: "session.update", patch: { question: { id: "q_1", text: "Which?" } } }],
        events: [ev("question.asked")],
      });
      for (const [s, status] of [
        [pending, "pending"],
        [unconfirmed, "unconfirmed"],
        [settled, "applied"],
      ] as const) {
        const turn = await newTurn(s.id);
        await store.apply(s.id, {
          ops: [{ type: "approval.insert", approval: approval(s.id, turn.id, { status }) }],
          events: [ev("approval.requested")],
        });
      }
      const ids = async (filter: {
        waiting?: boolean;
        cursor?: { createdAt: string; id: string };
        limit: number;
      }) => (await store.listSessions({ projectId, ...filter })).map((x) => x.id);
      expect(await ids({ waiting: true, limit: 10 })).toEqual([
        unconfirmed.id,
        pending.id,
        asking.id,
      ]);
      expect(await ids({ limit: 10 })).toHaveLength(5);
      expect(await ids({ waiting: false, limit: 10 })).toContain(plain.id);
      // Pages with a cursor as any other filter does.
      expect(
        await ids({ waiting: true, limit: 10, cursor: { createdAt: at(3), id: unconfirmed.id } }),
      ).toEqual([pending.id, asking.id]);
      // A question answered and an approval decided: no longer waiting.
      await store.apply(asking.id, {
        ops: [{ type: "session.update", patch: { question: null } }],
        events: [ev("question.answered")],
      });
      const [apr] = await store.listApprovals(pending.id);
      await store.apply(pending.id, {
        ops: [
          {
            type: "approval.update",
            id: apr!.id,
            expect: ["pending"],
            patch: { status: "denied" },
          },
        ],
        events: [ev("approval.decided")],
      });
      expect(await ids({ waiting: true, limit: 10 })).toEqual([unconfirmed.id]);
    });

    it("refuses a second approval for the same tool call", async () => {
      const s = await newSession();
      const turn = await newTurn(s.id);
      const a = approval(s.id, turn.id);
      await store.apply(s.id, { ops: [{ type: "approval.insert", approval: a }], events: [] });
      await expectRefused(
        store.apply(s.id, {
          ops: [
            {
              type: "approval.insert",
              approval: approval(s.id, turn.id, { toolCallId: a.toolCallId }),
            },
          ],
          events: [],
        }),
        "duplicate",
      );
    });
  });
}
