// The messages between the control plane and a worker process (Node IPC, JSON serialisation).
// The worker runs an author's code, so the channel is narrow: the control plane asks it to
// render or to run / preview / apply a tool, and accepts back only heartbeats, the outcome of a
// call it made, and progress for a call still open. Every worker message carries the token the
// control plane gave that worker in the handshake, and every message about a call carries that
// call's id and its key (random per call); anything else is refused. Agent code in the worker
// can get at the channel, so the control plane treats these as claims to check, not as facts
// (docs/workers.md, "Threat model").

import type { AgentInput, Decision, JsonObject, JsonValue } from "@opencomputer/agent";
import type { CodeOutcome, Egress, RenderedAgent } from "@opencomputer/runtime";

/** Bumped on any incompatible change; a worker of another version is refused at the handshake. */
export const PROTOCOL_VERSION = 3;

export interface RenderRef {
  renderId: string;
  request: {
    input: AgentInput;
    builtInToolIds: string[];
    /** The memory recalled for the render (absent when the session binds none). */
    memory?: RenderedAgent["request"]["memory"];
    /** The session's data (`useSessionData`). */
    sessionData?: JsonObject;
  };
}

export type ParentMessage =
  /** The handshake: the only message before `initialized`. */
  | {
      type: "init";
      version: number;
      token: string;
      loader: string;
      args: JsonValue;
      heartbeatMs: number;
    }
  | { type: "render"; id: number; key: string; request: RenderRef["request"] }
  | {
      type: "run";
      id: number;
      key: string;
      render: RenderRef;
      tool: string;
      call: {
        input: Record<string, unknown>;
        sessionId: string;
        messageId: string;
        toolCallId: string;
        agentId: string;
      };
      egress?: Egress;
      /** Render `render.request` again right after the outcome and send it as `next_render`. */
      renderAfter?: boolean;
    }
  | {
      type: "preview";
      id: number;
      key: string;
      render: RenderRef;
      tool: string;
      input: Record<string, unknown>;
      egress?: Egress;
    }
  | {
      type: "apply";
      id: number;
      key: string;
      render: RenderRef;
      tool: string;
      input: Record<string, unknown>;
      decision: Decision;
      egress?: Egress;
    }
  | { type: "abort"; id: number; reason: string }
  /** The progress of call `id` numbered `seq` is recorded (or `error` says why not). */
  | { type: "progress_ack"; id: number; seq: number; error?: string };

/** An error thrown by agent code, as far as it may cross: RenderErrors keep their code. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  /** Set for a RenderError (a platform rule the agent broke). */
  renderCode?: string;
}

export type WorkerMessage =
  | { type: "ready"; version: number }
  | { type: "initialized"; token: string; pid: number }
  | { type: "init_failed"; token: string; error: WireError }
  | { type: "heartbeat"; token: string }
  | { type: "rendered"; token: string; id: number; key: string; render: RenderedAgent }
  | { type: "render_failed"; token: string; id: number; key: string; error: WireError }
  | { type: "outcome"; token: string; id: number; key: string; outcome: CodeOutcome }
  /** The render that follows run `id`, or how it failed (as `render_failed` would say). */
  | {
      type: "next_render";
      token: string;
      id: number;
      key: string;
      render?: RenderedAgent;
      error?: WireError;
    }
  | { type: "progress"; token: string; id: number; key: string; seq: number; metadata: JsonValue };

/**
 * The shape of a worker message, checked before anything reads it: agent code can write to the
 * channel, and a malformed message must be dropped, not crash the control plane's handler.
 */
export function wellFormed(message: unknown): message is WorkerMessage {
  if (typeof message !== "object" || message === null) return false;
  const m = message as Record<string, unknown>;
  if (typeof m.type !== "string") return false;
  if (m.type === "ready") return typeof m.version === "number";
  if (typeof m.token !== "string") return false;
  if (m.type === "initialized") return typeof m.pid === "number";
  if (m.type === "heartbeat") return true;
  if (m.type === "init_failed") return isWireError(m.error);
  if (typeof m.id !== "number" || typeof m.key !== "string") return false;
  switch (m.type) {
    case "outcome":
      return isOutcome(m.outcome);
    case "progress":
      return typeof m.seq === "number";
    case "rendered":
      return typeof m.render === "object" && m.render !== null;
    case "render_failed":
      return isWireError(m.error);
    case "next_render":
      return m.error === undefined ? typeof m.render === "object" : isWireError(m.error);
    default:
      return false;
  }
}

function isWireError(value: unknown): value is WireError {
  return (
    typeof value === "object" && value !== null && typeof (value as WireError).message === "string"
  );
}

function isOutcome(value: unknown): value is CodeOutcome {
  if (typeof value !== "object" || value === null) return false;
  const o = value as Record<string, unknown>;
  return o.ok === true ? "value" in o : o.ok === false && typeof o.message === "string";
}
