// What a delegation needs from the runtime's sessions: make the child session, send it the
// task, cancel it, and hear when it changes. The sessions API builds it (sessions-api.ts) and
// puts it on the engine context, so the turn loop can delegate without depending on the API.

import { createHash } from "node:crypto";
import type { AgentInput } from "@opencomputer/agent";
import type { SessionParent } from "@opencomputer/protocol";
import type { SessionRecord } from "../ports/records.ts";
import type { Deadlines } from "./deadlines.ts";

export interface SubagentHost {
  /** Creates the child session `id`, or finds it when an earlier attempt made it. */
  create(
    parentSession: SessionRecord,
    agentId: string,
    id: string,
    parent: SessionParent,
  ): Promise<void>;
  /** Sends the task; the same `key` again returns the turn the first send made. */
  send(
    sessionId: string,
    input: AgentInput,
    key: string,
  ): Promise<{ turnId: string; duplicate: boolean }>;
  /** Cancels the child: interrupts its running turn, or ends it when its parent ended. */
  cancel(sessionId: string, ended: boolean): Promise<void>;
  /** Calls `listener` on every commit to the session, this process's or (shared signal) others'. */
  watch(sessionId: string, listener: () => void): () => void;
  /** A child is read again this often whatever was heard (another process, a missed signal). */
  pollMs: number;
  deadlines: Deadlines<() => void>;
}

/**
 * The child session of one delegation call. Derived from the parent session and the call, so a
 * call run again after a crash finds the child its first run made instead of starting another.
 */
export function subagentSessionId(parentSessionId: string, callId: string): string {
  const digest = createHash("sha256").update(`${parentSessionId}\0${callId}`).digest("hex");
  return `ses_sub_${digest.slice(0, 26)}`;
}

/** The idempotency key of the child session and of its task turn. */
export function subagentKey(parentSessionId: string, callId: string): string {
  return `subagent:${parentSessionId}:${callId}`;
}

/**
 * Resolves at the child's next commit, the next poll, or when `aborted` settles, whichever comes
 * first. Subscribing before reading (the caller reads after this returns a promise) means no
 * commit between a read and the wait is missed.
 */
export function nextChange(
  host: SubagentHost,
  sessionId: string,
  aborted: Promise<void>,
): { changed: Promise<void>; stop: () => void } {
  let stop = () => {};
  const changed = new Promise<void>((resolve) => {
    const done = () => {
      unwatch();
      host.deadlines.delete(done);
      resolve();
    };
    const unwatch = host.watch(sessionId, done);
    host.deadlines.set(done, Date.now() + host.pollMs);
    stop = done;
    void aborted.then(done);
  });
  return { changed, stop };
}
