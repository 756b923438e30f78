// Interrupting or ending a parent cancels the children its turns delegated to. Done where turns
// are cancelled (cancellation.ts), not by the waiting call: that call may be on a runtime that
// died, and a runtime closing (its calls' signals abort too) must leave the children running.

import { subagentToolName } from "@opencomputer/agent/internal";
import type { EngineContext } from "./context.ts";
import { subagentSessionId } from "./subagent-host.ts";

const PREFIX = subagentToolName("");

/**
 * Interrupts the child sessions of these turns' calls; with `"ended"`, ends the children of
 * every call the session ever delegated (an ended parent leaves no child running).
 */
export async function cancelChildren(
  ctx: EngineContext,
  sessionId: string,
  turnIds: readonly string[] | "ended",
): Promise<void> {
  const host = ctx.subagents;
  if (!host) return;
  const ended = turnIds === "ended";
  const calls = ended
    ? [await ctx.store.listToolCalls(sessionId)]
    : await Promise.all(turnIds.map((id) => ctx.store.listToolCalls(sessionId, id)));
  for (const list of calls) {
    for (const call of list) {
      if (!call.tool.startsWith(PREFIX)) continue;
      const child = subagentSessionId(sessionId, call.callId);
      if (!(await ctx.store.getSession(child))) continue;
      await host.cancel(child, ended).catch((error: unknown) =>
        ctx.log.error("cancelling a subagent failed", {
          sessionId,
          child,
          error: String(error),
        }),
      );
    }
  }
}
