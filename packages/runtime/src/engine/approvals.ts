import { newClaimant } from "./approval-claim.ts";
import { recoverApprovals } from "./approval-recovery.ts";
import { createApprovalsApi } from "./approvals-api.ts";
import type { EngineContext } from "./context.ts";
import type { ApprovalsApi } from "./runtime-api.ts";

export interface ApprovalOptions {
  /** How long `apply` may run before its outcome counts as unknown (default 60 s). */
  applyTimeoutMs: number;
  /** This start's name in claims (approval-claim.ts): the runtime's name and an incarnation. */
  claimant: string;
}

/** The approvals API, and the recovery the runtime runs at start and on every interval. */
export interface Approvals extends ApprovalsApi {
  /**
   * After a restart: an apply another runtime started and never settled is `unconfirmed` (never
   * re-run on its own); an approval decided but never claimed is applied now.
   */
  recover(now?: number): Promise<void>;
}

/**
 * Approvals after the model proposed them: a person decides once; an approved write is applied
 * at most once automatically (claimed `approved → applying` in the store, so racing deciders,
 * double clicks or two runtimes run one `apply`); an apply whose outcome never came back is
 * `unconfirmed` and runs again only when a person retries it, with the same `decision.id`.
 *
 * The parts: approval-state.ts (read, compare-and-set), approval-apply.ts (claim, run, settle),
 * approvals-api.ts (get, list, decide, retry, dismiss), approval-recovery.ts (after a restart).
 */
export function createApprovals(
  ctx: EngineContext,
  settings: Omit<ApprovalOptions, "claimant">,
): Approvals {
  const options = { ...settings, claimant: newClaimant(ctx.runtimeId) };
  return {
    ...createApprovalsApi(ctx, options),
    recover: (now = Date.now()) => recoverApprovals(ctx, options, now),
  };
}
