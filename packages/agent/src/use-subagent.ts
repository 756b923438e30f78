// `useSubagent(id)`: offers another agent of the project to the model for this render. The
// runtime turns each selected subagent into a delegation tool (`subagent_<id>`); a call runs a
// child session of that agent and completes with its answer. Like every hook it may be
// conditional.

import { describeValue } from "./describe-value.ts";
import { RenderError } from "./errors.ts";
import { currentRender } from "./render-context.ts";

/** Agent ids as the project names its agent directories. */
export const SUBAGENT_ID_PATTERN = /^[a-zA-Z0-9_-]{1,55}$/;

/** The name of the tool the model calls to delegate to `agentId`. */
export function subagentToolName(agentId: string): string {
  return `subagent_${agentId}`;
}

/** Makes the agent `agentId` of this project available for delegation in this render. */
export function useSubagent(agentId: string): void {
  const state = currentRender();
  if (typeof agentId !== "string" || !SUBAGENT_ID_PATTERN.test(agentId)) {
    throw new RenderError(
      "subagent_invalid",
      `useSubagent expects the id of an agent in this project (letters, digits, "_" or "-", at most 55 characters); got ${typeof agentId === "string" ? JSON.stringify(agentId) : describeValue(agentId)}`,
      { subagent: String(agentId) },
    );
  }
  state.subagents ??= [];
  if (!state.subagents.includes(agentId)) state.subagents.push(agentId);
}
