import { applyApproval } from "./approval-apply.ts";
import { claimOwner } from "./approval-claim.ts";
import { transition } from "./approval-state.ts";
import type { ApprovalOptions } from "./approvals.ts";
import type { EngineContext } from "./context.ts";

/**
 * After a restart: an apply another runtime (or an earlier start of this one) started and never
 * settled is `unconfirmed` (never re-run on its own); an approval decided but never claimed is
 * applied now.
 */
export async function recoverApprovals(
  ctx: EngineContext,
  options: ApprovalOptions,
  now = Date.now(),
): Promise<void> {
  for (const a of await ctx.store.listApprovalsByStatus(["applying", "approved"], 100)) {
    if (a.status === "approved") {
      void applyApproval(ctx, options, a.id).catch((error) =>
        ctx.log.error("approval apply failed", { approvalId: a.id, error: String(error) }),
      );
      continue;
    }
    const owner = claimOwner(a.claimedBy, options.claimant);
    if (owner === "mine") continue;
    // An earlier start of this runtime is dead now; another runtime may still be applying, and
    // nothing says it is not (an apply holds no lease), so it gets the full limit and a lease.
    const claimedAt = a.claimedAt ? Date.parse(a.claimedAt) : 0;
    const timedOut = now - claimedAt > options.applyTimeoutMs + ctx.leaseMs;
    if (owner === "other" && !timedOut) continue;
    const message =
      owner === "dead"
        ? `The runtime applying ${a.tool} was restarted before it reported back; it may have happened`
        : `The runtime applying ${a.tool} stopped before it reported back; it may have happened`;
    await transition(ctx, a, {
      expect: ["applying"],
      patch: { status: "unconfirmed", error: message },
      event: { type: "approval.unconfirmed", data: { approvalId: a.id, message } },
    });
  }
}
