// `opencomputer session attach <id>`: follow a session that already exists, print its events
// (from the start, or only new ones), and answer its questions and approval cards from the
// keyboard as they come. It never sends a message of its own: what the person types only
// answers what the session asks.

import type { SessionEvent } from "@opencomputer/protocol";
import type { OneShotBackend } from "./backend.ts";
import { answerChild } from "./child-waits.ts";
import type { Keyboard } from "./keyboard.ts";
import { askDecision, askQuestion } from "./prompts.ts";

export interface AttachOptions {
  sessionId: string;
  /** Print only events committed after attaching (default: the whole log first). */
  fromNow?: boolean;
  print(event: SessionEvent): void;
  say(line: string): void;
  keyboard?: Keyboard;
  flush?(): Promise<void>;
  /**
   * Return once the session is at rest (no turn running or queued, nothing waiting that this
   * attach can answer). Otherwise it follows until the session ends or `signal` aborts.
   */
  untilIdle?: boolean;
  signal?: AbortSignal;
}

export type AttachEnd = "ended" | "idle" | "stopped";

const AT_REST = new Set(["idle", "new", "failed", "ended"]);

export async function runAttach(
  backend: OneShotBackend,
  options: AttachOptions,
): Promise<AttachEnd> {
  const { sessionId } = options;
  let cursor = 0;
  if (options.fromNow) {
    // Skip the log: following starts after its last event.
    for (;;) {
      const page = await backend.nextEvents(sessionId, cursor);
      if (page.length === 0) break;
      cursor = page.at(-1)!.seq;
    }
  }
  // Questions and approvals already asked here: each is asked once, however often we look.
  const asked = new Set<string>();
  for (;;) {
    if (options.signal?.aborted) return "stopped";
    const events = await backend.nextEvents(sessionId, cursor);
    for (const e of events) {
      if (e.seq <= cursor) continue;
      cursor = e.seq;
      options.print(e);
      if (e.type === "session.ended") return "ended";
      // A subagent of this session waits for a person: asked here, answered on the child.
      if (e.type === "subagent.waiting") await answerChild(backend, options, e, asked);
    }
    if (events.length > 0) continue;
    // Quiet: see what waits for a person, and whether anything is still happening.
    const view = await backend.session(sessionId);
    if (view.status === "ended") return "ended";
    const pending = (await backend.approvals(sessionId)).filter(
      (a) => a.status === "pending" && !asked.has(a.id),
    );
    if (options.keyboard) {
      for (const approval of pending) {
        asked.add(approval.id);
        const decision = await askDecision(options, approval);
        const settled = await backend.decide(approval.id, decision);
        options.say(`approval ${approval.id}: ${settled.status}`);
      }
      if (view.question && !asked.has(view.question.id)) {
        asked.add(view.question.id);
        const answer = await askQuestion(options, view.question);
        await backend.sendTurn(sessionId, { source: "user", answer });
        continue;
      }
      if (pending.length > 0) continue;
    }
    // At rest: with a keyboard everything waiting was asked above; without one it stays open
    // and the caller says so.
    if (options.untilIdle && AT_REST.has(view.status)) return "idle";
  }
}
