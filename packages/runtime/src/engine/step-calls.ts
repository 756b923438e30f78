// Running the tool calls of one step: each goes to whoever serves its name.

import { subagentToolName } from "@opencomputer/agent/internal";
import type { AgentHandle, RenderedAgent, ToolDescriptor } from "../ports/agent-execution.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import { ASK_ID, takeAsk } from "./ask.ts";
import { executeBuiltInCall } from "./built-in-call.ts";
import { capabilityCall, type RenderCapabilities } from "./capabilities.ts";
import { executeMemoryCall, memoryToolsOf } from "./memory-tools.ts";
import { isFenceRefusal } from "./refusal.ts";
import { selectedBuiltIns } from "./step-tools.ts";
import { delegate, subagentOf } from "./subagent-call.ts";
import { executeCall } from "./tool-call.ts";
import type { TurnScope } from "./turn-scope.ts";
import { traceCall } from "./turn-spans.ts";

/** Runs a step's calls concurrently; stops waiting (not the tools) when the turn is aborted. */
export async function runCalls(
  scope: TurnScope,
  calls: ToolCallRecord[],
  agent: AgentHandle,
  render: RenderedAgent,
  caps: RenderCapabilities,
) {
  const byName = new Map<string, ToolDescriptor>();
  for (const tool of render.tools) byName.set(tool.name, tool);
  const builtIns = selectedBuiltIns(scope, render);
  const memoryTools = memoryToolsOf(render);
  const available = [...byName.keys(), ...builtIns.keys()];
  if (render.builtInTools.includes(ASK_ID)) available.push(ASK_ID);
  available.push(...caps.names);
  for (const id of render.subagents ?? []) available.push(subagentToolName(id));
  const all = Promise.allSettled(
    calls.map((call) =>
      traceCall(scope, call, () => {
        if (call.tool === ASK_ID && render.builtInTools.includes(ASK_ID))
          return takeAsk(scope, call);
        const capability = caps.names.length > 0 ? capabilityCall(scope, call, caps) : undefined;
        if (capability) return capability;
        const subagent = subagentOf(render.subagents, call.tool);
        if (subagent) return delegate(scope, call, subagent);
        const builtIn = builtIns.size > 0 ? builtIns.get(call.tool) : undefined;
        if (builtIn) return executeBuiltInCall(scope, call, builtIn);
        const memoryTargets = memoryTools.size > 0 ? memoryTools.get(call.tool) : undefined;
        if (memoryTargets) return executeMemoryCall(scope, call, memoryTargets);
        return executeCall(scope, call, byName.get(call.tool), available, { agent, render });
      }),
    ),
  );
  scope.inflight.add(all);
  all.finally(() => scope.inflight.delete(all));
  if (scope.signal.aborted) return;
  const outcomes = await Promise.race([all, scope.aborted]);
  for (const outcome of outcomes ?? []) {
    if (outcome.status === "rejected" && !isFenceRefusal(outcome.reason)) throw outcome.reason;
  }
}
