import { isoNow } from "../clock.ts";
import { jsonDigest } from "../digest.ts";
import { newId } from "../ids.ts";
import type { ToolDescriptor } from "../ports/agent-execution.ts";
import type { ApprovalRecord, ToolCallRecord } from "../ports/records.ts";
import { checkCard } from "./approval-card.ts";
import { write } from "./context.ts";
import { egressFor } from "./egress-for.ts";
import { isFenceRefusal } from "./refusal.ts";
import { type CallSite, commitFailure } from "./tool-call.ts";
import { guard, type TurnScope } from "./turn-scope.ts";

/** Sources where nobody is there to approve a write. */
const NOBODY_TO_ASK = new Set(["playground", "schedule", "webhook"]);

/**
 * The model called a tool that waits for a person: `preview` runs (it may read, must not write),
 * and the card with the exact arguments is recorded as a pending approval — in the same write as
 * the call's completion, whose output tells the model the change awaits a decision.
 */
export async function proposeApproval(
  scope: TurnScope,
  call: ToolCallRecord,
  tool: ToolDescriptor,
  site: CallSite,
): Promise<void> {
  if (NOBODY_TO_ASK.has(scope.source)) {
    return commitFailure(
      scope,
      call,
      `${tool.name} waits for a person's approval, but this session (source "${scope.source}") has nobody to ask`,
    );
  }
  const lease = await egressFor(scope, { callId: call.callId, phase: "preview" });
  let preview: Awaited<ReturnType<typeof site.agent.previewTool>>;
  try {
    preview = await site.agent.previewTool(site.render, tool.name, {
      input: call.input as Record<string, unknown>,
      signal: scope.signal,
      egress: lease.egress,
    });
  } finally {
    await lease.end();
  }
  if (!preview.ok) return commitFailure(scope, call, preview.message);
  const card = preview.value;
  const checked = checkCard(card, tool.name);
  if (typeof checked === "string") return commitFailure(scope, call, checked);
  const approval = pendingApproval(scope, call, tool.name, checked);
  const output = {
    approvalId: approval.id,
    status: "pending",
    message:
      "The change was recorded for approval and has NOT been made. Stop here and tell the person it awaits their decision.",
  };
  const done: ToolCallRecord = {
    ...call,
    status: "completed",
    output,
    settledAt: approval.createdAt,
  };
  try {
    await write(scope.ctx, scope.sessionId, {
      ...guard(scope),
      ops: [
        { type: "approval.insert", approval },
        { type: "toolCall.upsert", call: done },
      ],
      events: [
        {
          type: "tool.completed",
          turnId: scope.turn.id,
          data: { tool: tool.name, callId: call.callId, title: tool.name, output },
        },
        {
          type: "approval.requested",
          turnId: scope.turn.id,
          data: {
            approvalId: approval.id,
            tool: tool.name,
            callId: call.callId,
            input: call.input,
            card: approval.card,
            digest: approval.digest,
          },
        },
      ],
    });
    scope.conversation.setCall(done);
  } catch (error) {
    if (!isFenceRefusal(error)) throw error;
  }
}

/** The approval record for a call and its checked card; the digest binds tool, input and card. */
function pendingApproval(
  scope: TurnScope,
  call: ToolCallRecord,
  tool: string,
  card: ApprovalRecord["card"],
): ApprovalRecord {
  const now = isoNow();
  return {
    id: newId("apr"),
    sessionId: scope.sessionId,
    turnId: scope.turn.id,
    toolCallId: call.callId,
    agentId: scope.agentId,
    deploymentId: scope.deploymentId,
    tool,
    input: call.input,
    card,
    digest: jsonDigest({ tool, input: call.input, card }),
    status: "pending",
    decision: null,
    outcome: null,
    error: null,
    attempts: 0,
    claimedBy: null,
    claimedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}
