import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import type { ApprovalRecord } from "../ports/records.ts";
import { ConflictError } from "./api-errors.ts";
import { applyApproval } from "./approval-apply.ts";
import { mustGetApproval, transition } from "./approval-state.ts";
import type { ApprovalOptions } from "./approvals.ts";
import type { EngineContext } from "./context.ts";
import { InputError } from "./input.ts";
import type { ApprovalDecisionInput, ApprovalsApi } from "./runtime-api.ts";

/** A person's decision: once per approval (`approval_decided` after that). Approving applies. */
export async function decideApproval(
  ctx: EngineContext,
  options: ApprovalOptions,
  id: string,
  body: ApprovalDecisionInput,
): Promise<ApprovalRecord> {
  checkDecision(body);
  const a = await mustGetApproval(ctx, id);
  const decision = {
    id: newId("dec"),
    decidedAt: isoNow(),
    ...(typeof body.decidedBy === "string" ? { decidedBy: body.decidedBy } : {}),
  };
  const status = body.decision === "approve" ? "approved" : "denied";
  const decided = await transition(ctx, a, {
    expect: ["pending"],
    patch: { status, decision },
    event: { type: "approval.decided", data: { approvalId: a.id, status, decision } },
  });
  if (!decided) {
    const now = await mustGetApproval(ctx, id);
    throw new ConflictError("approval_decided", `Approval ${id} is already ${now.status}`, {
      path: "approvalId",
    });
  }
  return status === "approved" ? applyApproval(ctx, options, id) : mustGetApproval(ctx, id);
}

function checkDecision(body: ApprovalDecisionInput): void {
  if (body.decision !== "approve" && body.decision !== "deny") {
    throw new InputError("invalid_input", 'decision: must be "approve" or "deny"', {
      path: "decision",
    });
  }
  if (
    body.decidedBy !== undefined &&
    (typeof body.decidedBy !== "string" || body.decidedBy.length > 200)
  ) {
    throw new InputError("invalid_input", "decidedBy: must be a string of at most 200 characters", {
      path: "decidedBy",
    });
  }
}

/** Runs an unconfirmed apply again, on a person's request, with the same `decision.id`. */
export async function retryApproval(
  ctx: EngineContext,
  options: ApprovalOptions,
  id: string,
): Promise<ApprovalRecord> {
  const a = await mustGetApproval(ctx, id);
  const reopened = await transition(ctx, a, {
    expect: ["unconfirmed"],
    patch: { status: "approved" },
    event: {
      type: "approval.retried",
      data: { approvalId: a.id, decisionId: a.decision?.id ?? null },
    },
  });
  if (!reopened)
    throw new ConflictError("approval_state", `Approval ${id} is ${a.status}, not unconfirmed`, {
      path: "approvalId",
    });
  return applyApproval(ctx, options, id);
}

/** Accepts an unconfirmed outcome as it is; nothing runs again. */
export async function dismissApproval(ctx: EngineContext, id: string): Promise<ApprovalRecord> {
  const a = await mustGetApproval(ctx, id);
  const done = await transition(ctx, a, {
    expect: ["unconfirmed"],
    patch: { status: "dismissed" },
    event: { type: "approval.dismissed", data: { approvalId: a.id } },
  });
  if (!done)
    throw new ConflictError("approval_state", `Approval ${id} is ${a.status}, not unconfirmed`, {
      path: "approvalId",
    });
  return mustGetApproval(ctx, id);
}

/** The runtime's `approvals` (documented on ApprovalsApi). */
export function createApprovalsApi(ctx: EngineContext, options: ApprovalOptions): ApprovalsApi {
  return {
    get: (id) => mustGetApproval(ctx, id),
    list: (sessionId) => ctx.store.listApprovals(sessionId),
    decide: (id, body) => decideApproval(ctx, options, id, body),
    retry: (id) => retryApproval(ctx, options, id),
    dismiss: (id) => dismissApproval(ctx, id),
  };
}
