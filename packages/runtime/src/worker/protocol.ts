// The messages between the control plane and a worker process (Node IPC, JSON serialisation).
// The worker runs an author's code, so the channel is narrow: the control plane asks it to
// render or to run / preview / apply a tool, and accepts back only heartbeats, the outcome of a
// call it made, and progress for a call still open. Every worker message carries the token the
// control plane gave that worker in the handshake; anything else is ignored.

import type { AgentInput, Decision, JsonValue } from "@opencomputer/agent";
import type { CodeOutcome, Egress, RenderedAgent } from "../agents/execution.ts";

/** Bumped on any incompatible change; a worker of another version is refused at the handshake. */
export const PROTOCOL_VERSION = 2;

export interface RenderRef {
  renderId: string;
  request: { input: AgentInput; builtInToolIds: string[] };
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
  | { type: "render"; id: number; request: RenderRef["request"] }
  | {
      type: "run";
      id: number;
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
      render: RenderRef;
      tool: string;
      input: Record<string, unknown>;
      egress?: Egress;
    }
  | {
      type: "apply";
      id: number;
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
  | { type: "rendered"; token: string; id: number; render: RenderedAgent }
  | { type: "render_failed"; token: string; id: number; error: WireError }
  | { type: "outcome"; token: string; id: number; outcome: CodeOutcome }
  /** The render that follows run `id`, or how it failed (as `render_failed` would say). */
  | { type: "next_render"; token: string; id: number; render?: RenderedAgent; error?: WireError }
  | { type: "progress"; token: string; id: number; seq: number; metadata: JsonValue };
