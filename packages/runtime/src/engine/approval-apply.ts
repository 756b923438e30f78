import { isoNow } from "../clock.ts";
import { type AgentHandle, type RenderedAgent, WorkerLostError } from "../ports/agent-execution.ts";
import type { ApprovalRecord } from "../ports/records.ts";
import type { ApprovalPatch } from "../ports/store.ts";
import { type ApprovalEvent, mustGetApproval, transition } from "./approval-state.ts";
import type { ApprovalOptions } from "./approvals.ts";
import { ASK_ID } from "./ask.ts";
import type { EngineContext } from "./context.ts";
import { leaseEgress } from "./egress-for.ts";

type Found = { agent: AgentHandle; render: RenderedAgent };

/** Record how a claimed apply ended (from `applying`, with its event). */
function settlers(ctx: EngineContext, a: ApprovalRecord) {
  const settle = (patch: ApprovalPatch, event: ApprovalEvent | ApprovalEvent[]) =>
    transition(ctx, a, { expect: ["applying"], patch, event });
  const failed = (message: string, status: "failed" | "unconfirmed" = "failed") =>
    settle(
      { status, error: message },
      { type: `approval.${status}`, data: { approvalId: a.id, message } },
    );
  return { settle, failed };
}

/** Claims an approved (or retried) approval and runs its `apply` once. */
export async function applyApproval(
  ctx: EngineContext,
  options: ApprovalOptions,
  id: string,
): Promise<ApprovalRecord> {
  const a = await mustGetApproval(ctx, id);
  const now = isoNow();
  const claimed = await transition(ctx, a, {
    expect: ["approved"],
    patch: {
      status: "applying",
      attempts: a.attempts + 1,
      claimedBy: options.claimant,
      claimedAt: now,
    },
    event: {
      type: "approval.applying",
      data: { approvalId: a.id, attempt: a.attempts + 1, decisionId: a.decision?.id ?? null },
    },
  });
  if (!claimed) return mustGetApproval(ctx, id);
  const tool = await findTool(ctx, a);
  if (typeof tool === "string") {
    await settlers(ctx, a).failed(tool);
    return mustGetApproval(ctx, id);
  }
  await runApply(ctx, options, a, tool);
  return mustGetApproval(ctx, id);
}

/** Runs the claimed approval's `apply` under a timeout and records how it ended. */
async function runApply(
  ctx: EngineContext,
  options: ApprovalOptions,
  a: ApprovalRecord,
  tool: Found,
): Promise<void> {
  const { settle, failed } = settlers(ctx, a);
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
      callId: a.toolCallId,
      phase: "apply",
      ...(a.decision ? { decisionId: a.decision.id } : {}),
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
      // Returned normally, so it applied, whatever it returned: a value that was not JSON is
      // recorded as its description, with a warning beside it, never as a failure to redo.
      const applied: ApprovalEvent = {
        type: "approval.applied",
        data: { approvalId: a.id, outcome: outcome.value },
      };
      const warning: ApprovalEvent[] = outcome.warning
        ? [
            {
              type: "approval.warning",
              data: { approvalId: a.id, code: "outcome_not_json", message: outcome.warning },
            },
          ]
        : [];
      await settle({ status: "applied", outcome: outcome.value, error: null }, [
        ...warning,
        applied,
      ]);
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
}

/** The approval's tool as the proposing turn rendered it, or why it cannot be applied. */
async function findTool(ctx: EngineContext, a: ApprovalRecord): Promise<Found | string> {
  try {
    const [session, turn] = await Promise.all([
      ctx.store.getSession(a.sessionId),
      ctx.store.getTurn(a.sessionId, a.turnId),
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
