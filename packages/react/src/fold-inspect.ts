import type { EventOf } from "@opencomputer/protocol";
import type { SessionEvent } from "./types.ts";

// What the session page's inspector shows beside the conversation: each render of the agent
// (instructions, model, tools) and each outbound request through a connection. Both are read
// from the event log; the egress events carry no secrets (the gateway adds credentials after
// the event is written, and `path` has no query string).

/** One call of the agent function, before a model step (`agent.rendered`). */
export interface Render {
  /** 1-based, in log order: "render 3". */
  number: number;
  renderId: string;
  seq: number;
  turnId?: string;
  instructions: string;
  model: string | null;
  /** Why `model` is what it is: the agent chose it, the default filled in, or an override won. */
  modelSource?: "agent" | "default" | "override";
  tools: string[];
  /** What else the render attached, when it did: MCP servers, skills, subagents, connections. */
  mcpServers: string[];
  skills: string[];
  subagents: string[];
  connections: string[];
  renderedAt: string;
}

/** A turn's model usage: the sums of its `usage.recorded` events. */
export interface TurnUsage {
  turnId: string;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** The priced steps' cost; steps without a price are counted in `unpricedSteps`. */
  costUsd: number;
  unpricedSteps: number;
}

/** One request through a connection: `egress.request`, then its response or failure. */
export interface EgressRequest {
  key: string;
  seq: number;
  turnId?: string;
  connectionId: string;
  method: string;
  path: string;
  state: "pending" | "answered" | "failed";
  status?: number;
  durationMs?: number;
  message?: string;
  /** When the request was made (the event's timestamp). */
  at: string;
}

export interface InspectState {
  renders: Render[];
  egress: EgressRequest[];
  /** Per turn, in the order turns first recorded usage. */
  usage: TurnUsage[];
}

type EgressEvent =
  | EventOf<"egress.request">
  | EventOf<"egress.response">
  | EventOf<"egress.failed">;

/** Folds one event into the inspector state; returns the same object when it is not relevant. */
export function foldInspect(state: InspectState, e: SessionEvent): InspectState {
  if (e.type === "agent.rendered") {
    const d = e.data;
    const render: Render = {
      number: state.renders.length + 1,
      renderId: d.renderId,
      seq: e.seq,
      ...(e.turnId ? { turnId: e.turnId } : {}),
      instructions: d.instructions,
      model: d.model,
      ...(d.modelSource ? { modelSource: d.modelSource } : {}),
      tools: d.enabledTools,
      mcpServers: d.enabledMcpServers ?? [],
      skills: d.skills ?? [],
      subagents: d.enabledSubagents ?? [],
      connections: d.requiredConnections ?? [],
      renderedAt: d.renderedAt,
    };
    return { ...state, renders: [...state.renders, render] };
  }
  if (e.type === "usage.recorded") return { ...state, usage: foldUsage(state.usage, e) };
  if (e.type === "egress.request" || e.type === "egress.response" || e.type === "egress.failed")
    return { ...state, egress: foldEgress(state.egress, e) };
  return state;
}

/**
 * Matches a response or failure to the oldest unanswered request with the same connection,
 * method and path in the same turn (events carry no request id); one without a request (its
 * request event came before `after`) stands on its own.
 */
function foldEgress(list: EgressRequest[], e: EgressEvent): EgressRequest[] {
  const { connectionId, method, path } = e.data;
  if (e.type === "egress.request") {
    const entry: EgressRequest = {
      key: `egress:${e.seq}`,
      seq: e.seq,
      ...(e.turnId ? { turnId: e.turnId } : {}),
      connectionId,
      method,
      path,
      state: "pending",
      at: e.timestamp,
    };
    return [...list, entry];
  }
  const outcome: Partial<EgressRequest> =
    e.type === "egress.response"
      ? { state: "answered", status: e.data.status, durationMs: e.data.durationMs }
      : { state: "failed", message: e.data.message };
  const i = list.findIndex(
    (r) =>
      r.state === "pending" &&
      r.connectionId === connectionId &&
      r.method === method &&
      r.path === path &&
      r.turnId === e.turnId,
  );
  if (i === -1) {
    const entry: EgressRequest = {
      key: `egress:${e.seq}`,
      seq: e.seq,
      ...(e.turnId ? { turnId: e.turnId } : {}),
      connectionId,
      method,
      path,
      state: "pending",
      at: e.timestamp,
      ...outcome,
    };
    return [...list, entry];
  }
  const next = list.slice();
  next[i] = { ...list[i]!, ...outcome };
  return next;
}

/** What changed from one render to the next: the model, tools added and removed, instructions. */
export interface RenderChange {
  model: { from: string | null; to: string | null } | null;
  toolsAdded: string[];
  toolsRemoved: string[];
  instructionsChanged: boolean;
}

export function renderChange(previous: Render | undefined, render: Render): RenderChange | null {
  if (!previous) return null;
  const before = new Set(previous.tools);
  const after = new Set(render.tools);
  return {
    model: previous.model === render.model ? null : { from: previous.model, to: render.model },
    toolsAdded: render.tools.filter((t) => !before.has(t)),
    toolsRemoved: previous.tools.filter((t) => !after.has(t)),
    instructionsChanged: previous.instructions !== render.instructions,
  };
}

function foldUsage(list: TurnUsage[], e: EventOf<"usage.recorded">): TurnUsage[] {
  const turnId = e.turnId ?? "";
  const i = list.findIndex((u) => u.turnId === turnId);
  const before: TurnUsage = list[i] ?? { turnId, ...NO_USAGE };
  const d = e.data;
  const priced = typeof d.costUsd === "number";
  const after: TurnUsage = {
    turnId,
    steps: before.steps + 1,
    inputTokens: before.inputTokens + d.inputTokens,
    outputTokens: before.outputTokens + d.outputTokens,
    cacheReadTokens: before.cacheReadTokens + (d.cacheReadTokens ?? 0),
    cacheWriteTokens: before.cacheWriteTokens + (d.cacheWriteTokens ?? 0),
    costUsd: roundUsd(before.costUsd + (priced ? (d.costUsd as number) : 0)),
    unpricedSteps: before.unpricedSteps + (priced ? 0 : 1),
  };
  if (i === -1) return [...list, after];
  const next = list.slice();
  next[i] = after;
  return next;
}

const NO_USAGE = {
  steps: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
  unpricedSteps: 0,
};

// Prices are given to a millionth of a cent; sums of floats must not show more.
const roundUsd = (usd: number) => Math.round(usd * 1e8) / 1e8;

/** The session's usage so far: the sum of its turns'. */
export function usageTotal(turns: readonly TurnUsage[]): Omit<TurnUsage, "turnId"> {
  const total = { ...NO_USAGE };
  for (const t of turns) {
    total.steps += t.steps;
    total.inputTokens += t.inputTokens;
    total.outputTokens += t.outputTokens;
    total.cacheReadTokens += t.cacheReadTokens;
    total.cacheWriteTokens += t.cacheWriteTokens;
    total.costUsd = roundUsd(total.costUsd + t.costUsd);
    total.unpricedSteps += t.unpricedSteps;
  }
  return total;
}
