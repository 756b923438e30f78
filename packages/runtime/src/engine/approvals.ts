import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import { type AgentHandle, type RenderedAgent, WorkerLostError } from "../ports/agent-execution.ts";
import type { ApprovalRecord, ApprovalStatus } from "../ports/records.ts";
import type { ApprovalPatch, NewEvent } from "../ports/store.ts";
import { StoreError } from "../ports/store-errors.ts";
import { ConflictError, NotFoundError } from "./api-errors.ts";
import { ASK_ID } from "./ask.ts";
import { type EngineContext, write } from "./context.ts";
import { leaseEgress } from "./egress-for.ts";
import { InputError } from "./input.ts";
import type { ApprovalsApi } from "./runtime-api.ts";

export interface ApprovalOptions {
  /** How long `apply` may run before its outcome counts as unknown (default 60 s). */
  applyTimeoutMs: number;
}

/** The approvals API, and the recovery the runtime runs at start and on every interval. */
export interface Approvals extends ApprovalsApi {
  /**
   * After a restart: an apply another runtime started and never settled is `unconfirmed` (never
   * re-run on its own); an approval decided but never claimed is applied now.
   */
  recover(now?: number): Promise<void>;
}

/** An approval event, without the turn it is logged under (the approval's own). */
type ApprovalEvent = Omit<Extract<NewEvent, { type: `approval.${string}` }>, "turnId">;

type Transition = {
  expect: readonly ApprovalStatus[];
  patch: ApprovalPatch;
  event: ApprovalEvent;
};

/**
 * Approvals after the model proposed them: a person decides once; an approved write is applied
 * at most once automatically (claimed `approved → applying` in the store, so racing deciders,
 * double clicks or two runtimes run one `apply`); an apply whose outcome never came back is
 * `unconfirmed` and runs again only when a person retries it, with the same `decision.id`.
 */
export function createApprovals(ctx: EngineContext, options: ApprovalOptions): Approvals {
  const { store } = ctx;

  async function mustGet(id: string): Promise<ApprovalRecord> {
    const approval = await store.getApproval(id);
    if (!approval) throw new NotFoundError("approval", id);
    return approval;
  }

  /** One compare-and-set with its event; false when the approval was not in an expected status. */
  async function transition(a: ApprovalRecord, t: Transition): Promise<boolean> {
    try {
      await write(ctx, a.sessionId, {
        ops: [{ type: "approval.update", id: a.id, expect: t.expect, patch: t.patch }],
        events: [{ ...t.event, turnId: a.turnId } as NewEvent],
      });
      return true;
    } catch (error) {
      if (error instanceof StoreError && error.code === "approval_state") return false;
      throw error;
    }
  }

  type Found = { agent: AgentHandle; render: RenderedAgent };

  async function findTool(a: ApprovalRecord): Promise<Found | string> {
    try {
      const [session, turn] = await Promise.all([
        store.getSession(a.sessionId),
        store.getTurn(a.sessionId, a.turnId),
      ]);
      if (!turn || !session) return `turn ${a.turnId} is gone`;
      const microvm = session.executionMode === "microvm";
      const agent = await ctx.execution.open(
        a.agentId,
        a.deploymentId,
        microvm ? "microvm" : "default",
      );
      // The tool set the proposing turn rendered; apply needs the tool, not the conversation.
      const render = await agent.render({
        input: turn.input,
        builtInToolIds: microvm
          ? ctx.builtInToolIds.filter((id) => id !== ASK_ID)
          : ctx.builtInToolIds,
      });
      const tool = render.tools.find((t) => t.name === a.tool && t.kind === "approval");
      return tool ? { agent, render } : `${a.tool} is no longer an approval tool of ${a.agentId}`;
    } catch (error) {
      ctx.log.error("approval tool lookup failed", { approvalId: a.id, error: String(error) });
      return `${a.tool} could not be loaded`;
    }
  }

  /** Claims an approved (or retried) approval and runs its `apply` once. */
  async function apply(id: string): Promise<ApprovalRecord> {
    const a = await mustGet(id);
    const now = isoNow();
    const claimed = await transition(a, {
      expect: ["approved"],
      patch: {
        status: "applying",
        attempts: a.attempts + 1,
        claimedBy: ctx.runtimeId,
        claimedAt: now,
      },
      event: {
        type: "approval.applying",
        data: { approvalId: a.id, attempt: a.attempts + 1, decisionId: a.decision?.id ?? null },
      },
    });
    if (!claimed) return mustGet(id);
    const tool = await findTool(a);
    const settle = (patch: ApprovalPatch, event: ApprovalEvent) =>
      transition(a, { expect: ["applying"], patch, event });
    const failed = (message: string, status: "failed" | "unconfirmed" = "failed") =>
      settle(
        { status, error: message },
        { type: `approval.${status}`, data: { approvalId: a.id, message } },
      );
    if (typeof tool === "string") {
      await failed(tool);
      return mustGet(id);
    }
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), options.applyTimeoutMs);
    });
    // Ended when apply settles (or times out, through the abort) and before the outcome is
    // recorded: nothing apply left running calls out afterwards.
    const lease = await leaseEgress(
      ctx,
      {
        sessionId: a.sessionId,
        agentId: a.agentId,
        deploymentId: a.deploymentId,
        turnId: a.turnId,
      },
      controller.signal,
    );
    const run = tool.agent.applyTool(tool.render, a.tool, {
      input: a.input as Record<string, unknown>,
      decision: a.decision!,
      signal: controller.signal,
      ...(lease.egress ? { egress: lease.egress } : {}),
    });
    try {
      const outcome = await Promise.race([run, timedOut]).finally(lease.end);
      if (outcome === "timeout") {
        controller.abort(new Error("apply timed out"));
        const message = `${a.tool} did not report back within ${options.applyTimeoutMs} ms; it may have happened`;
        await failed(message, "unconfirmed");
      } else if (outcome.ok) {
        await settle(
          { status: "applied", outcome: outcome.value, error: null },
          { type: "approval.applied", data: { approvalId: a.id, outcome: outcome.value } },
        );
      } else {
        await failed(outcome.message);
      }
    } catch (error) {
      // The process running apply died mid-call: the write may or may not have happened.
      const lost = error instanceof WorkerLostError;
      const message = lost
        ? `The worker running ${a.tool} stopped before it reported back; it may have happened`
        : ((error as Error)?.message ?? String(error));
      await failed(message, lost ? "unconfirmed" : "failed");
    } finally {
      clearTimeout(timer);
      await lease.end();
    }
    return mustGet(id);
  }

  return {
    get: mustGet,
    list: (sessionId: string) => store.listApprovals(sessionId),

    /** A person's decision: once per approval (`approval_decided` after that). Approving applies. */
    async decide(
      id: string,
      body: { decision: unknown; decidedBy?: unknown },
    ): Promise<ApprovalRecord> {
      if (body.decision !== "approve" && body.decision !== "deny") {
        throw new InputError("invalid_input", 'decision: must be "approve" or "deny"', {
          path: "decision",
        });
      }
      if (
        body.decidedBy !== undefined &&
        (typeof body.decidedBy !== "string" || body.decidedBy.length > 200)
      ) {
        throw new InputError(
          "invalid_input",
          "decidedBy: must be a string of at most 200 characters",
          {
            path: "decidedBy",
          },
        );
      }
      const a = await mustGet(id);
      const decision = {
        id: newId("dec"),
        decidedAt: isoNow(),
        ...(typeof body.decidedBy === "string" ? { decidedBy: body.decidedBy } : {}),
      };
      const status = body.decision === "approve" ? "approved" : "denied";
      const decided = await transition(a, {
        expect: ["pending"],
        patch: { status, decision },
        event: { type: "approval.decided", data: { approvalId: a.id, status, decision } },
      });
      if (!decided) {
        const now = await mustGet(id);
        throw new ConflictError("approval_decided", `Approval ${id} is already ${now.status}`, {
          path: "approvalId",
        });
      }
      return status === "approved" ? apply(id) : mustGet(id);
    },

    /** Runs an unconfirmed apply again, on a person's request, with the same `decision.id`. */
    async retry(id: string): Promise<ApprovalRecord> {
      const a = await mustGet(id);
      const reopened = await transition(a, {
        expect: ["unconfirmed"],
        patch: { status: "approved" },
        event: {
          type: "approval.retried",
          data: { approvalId: a.id, decisionId: a.decision?.id ?? null },
        },
      });
      if (!reopened)
        throw new ConflictError(
          "approval_state",
          `Approval ${id} is ${a.status}, not unconfirmed`,
          { path: "approvalId" },
        );
      return apply(id);
    },

    /** Accepts an unconfirmed outcome as it is; nothing runs again. */
    async dismiss(id: string): Promise<ApprovalRecord> {
      const a = await mustGet(id);
      const done = await transition(a, {
        expect: ["unconfirmed"],
        patch: { status: "dismissed" },
        event: { type: "approval.dismissed", data: { approvalId: a.id } },
      });
      if (!done)
        throw new ConflictError(
          "approval_state",
          `Approval ${id} is ${a.status}, not unconfirmed`,
          { path: "approvalId" },
        );
      return mustGet(id);
    },

    /**
     * After a restart: an apply another runtime started and never settled is `unconfirmed` (never
     * re-run on its own); an approval decided but never claimed is applied now.
     */
    async recover(now = Date.now()): Promise<void> {
      for (const a of await store.listApprovalsByStatus(["applying", "approved"], 100)) {
        if (a.status === "approved") {
          void apply(a.id).catch((error) =>
            ctx.log.error("approval apply failed", { approvalId: a.id, error: String(error) }),
          );
          continue;
        }
        const claimedAt = a.claimedAt ? Date.parse(a.claimedAt) : 0;
        const stale =
          a.claimedBy !== ctx.runtimeId && now - claimedAt > options.applyTimeoutMs + ctx.leaseMs;
        if (!stale) continue;
        const message = `The runtime applying ${a.tool} stopped before it reported back; it may have happened`;
        await transition(a, {
          expect: ["applying"],
          patch: { status: "unconfirmed", error: message },
          event: { type: "approval.unconfirmed", data: { approvalId: a.id, message } },
        });
      }
    },
  };
}
