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
  tools: string[];
  renderedAt: string;
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
      tools: d.enabledTools,
      renderedAt: d.renderedAt,
    };
    return { ...state, renders: [...state.renders, render] };
  }
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
