import { applyApproval } from "./approval-apply.ts";
import { transition } from "./approval-state.ts";
import type { ApprovalOptions } from "./approvals.ts";
import type { EngineContext } from "./context.ts";

/**
 * After a restart: an apply another runtime started and never settled is `unconfirmed` (never
 * re-run on its own); an approval decided but never claimed is applied now.
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
    const claimedAt = a.claimedAt ? Date.parse(a.claimedAt) : 0;
    const stale =
      a.claimedBy !== ctx.runtimeId && now - claimedAt > options.applyTimeoutMs + ctx.leaseMs;
    if (!stale) continue;
    const message = `The runtime applying ${a.tool} stopped before it reported back; it may have happened`;
    await transition(ctx, a, {
      expect: ["applying"],
      patch: { status: "unconfirmed", error: message },
      event: { type: "approval.unconfirmed", data: { approvalId: a.id, message } },
    });
  }
}
