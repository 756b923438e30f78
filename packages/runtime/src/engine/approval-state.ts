import type { ApprovalRecord, ApprovalStatus } from "../ports/records.ts";
import type { ApprovalPatch, NewEvent } from "../ports/store.ts";
import { StoreError } from "../ports/store-errors.ts";
import { NotFoundError } from "./api-errors.ts";
import { type EngineContext, write } from "./context.ts";

/** An approval event, without the turn it is logged under (the approval's own). */
export type ApprovalEvent = Omit<Extract<NewEvent, { type: `approval.${string}` }>, "turnId">;

export type Transition = {
  expect: readonly ApprovalStatus[];
  patch: ApprovalPatch;
  /** Logged in the same write as the patch, in order. */
  event: ApprovalEvent | readonly ApprovalEvent[];
};

/** The approval; `not_found` when there is none. */
export async function mustGetApproval(ctx: EngineContext, id: string): Promise<ApprovalRecord> {
  const approval = await ctx.store.getApproval(id);
  if (!approval) throw new NotFoundError("approval", id);
  return approval;
}

/** One compare-and-set with its event; false when the approval was not in an expected status. */
export async function transition(
  ctx: EngineContext,
  a: ApprovalRecord,
  t: Transition,
): Promise<boolean> {
  try {
    await write(ctx, a.sessionId, {
      ops: [{ type: "approval.update", id: a.id, expect: t.expect, patch: t.patch }],
      events: (Array.isArray(t.event) ? t.event : [t.event]).map(
        (event) => ({ ...event, turnId: a.turnId }) as NewEvent,
      ),
    });
    return true;
  } catch (error) {
    if (error instanceof StoreError && error.code === "approval_state") return false;
    throw error;
  }
}
