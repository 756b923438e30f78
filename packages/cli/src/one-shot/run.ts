import type { SessionEvent } from "@opencomputer/protocol";
import type { OneShotBackend, OpenQuestion } from "./backend.ts";
import { answerChild } from "./child-waits.ts";
import type { Keyboard } from "./keyboard.ts";
import { askDecision, askQuestion } from "./prompts.ts";

const SETTLED = new Set(["turn.completed", "turn.failed", "turn.cancelled"]);
/** Approval events after which nothing more happens on their own. */
const FINAL = new Set(["approval.applied", "approval.failed", "approval.unconfirmed"]);

/** The event that settles a decision: the apply's outcome, or the denial itself. */
function settlesApproval(e: SessionEvent, approvalId: string): boolean {
  if (e.type === "approval.decided")
    return e.data.approvalId === approvalId && e.data.status === "denied";
  return FINAL.has(e.type) && (e.data as { approvalId: string }).approvalId === approvalId;
}

export interface OneShotOptions {
  agentRef: string;
  text: string;
  print(event: SessionEvent): void;
  /** Lines for people (questions, cards, outcomes); stderr so `--json` stdout stays NDJSON. */
  say(line: string): void;
  /** When set, questions and approval cards are answered from it; otherwise they are left open. */
  keyboard?: Keyboard;
  /** Resolves once everything printed so far is written, so a prompt starts below it. */
  flush?(): Promise<void>;
}

export interface OneShotOutcome {
  sessionId: string;
  /** How the last turn settled: completed, failed or cancelled. */
  status: string;
  error?: { code: string; message: string };
  result: unknown;
  /** A question left open (no keyboard). */
  question: OpenQuestion | null;
  /** Approvals left pending (no keyboard). */
  pending: string[];
}

/**
 * Runs one message to the end: prints every event in order, and when the turn stops at a
 * question or an approval card, asks the person at the keyboard, sends the answer (a new turn
 * with `input.answer`) or the decision, and follows what happens next — until nothing waits.
 */
export async function runOneShot(
  backend: OneShotBackend,
  options: OneShotOptions,
): Promise<OneShotOutcome> {
  const sessionId = await backend.createSession(options.agentRef);
  let cursor = 0;
  // A parent's runtime that restarts may tell of the same wait again.
  const answered = new Set<string>();
  const follow = async (until: (e: SessionEvent) => boolean): Promise<SessionEvent> => {
    for (;;) {
      for (const e of await backend.nextEvents(sessionId, cursor)) {
        if (e.seq <= cursor) continue;
        cursor = e.seq;
        options.print(e);
        if (e.type === "subagent.waiting") await answerChild(backend, options, e, answered);
        if (until(e)) return e;
      }
    }
  };

  let turnId = await backend.sendTurn(sessionId, { source: "user", text: options.text });
  for (;;) {
    const settled = await follow((e) => e.turnId === turnId && SETTLED.has(e.type));
    const status = settled.type.slice("turn.".length);
    const view = await backend.session(sessionId);
    const pending = (await backend.approvals(sessionId)).filter((a) => a.status === "pending");
    const done = (): OneShotOutcome => ({
      sessionId,
      status,
      ...(settled.type === "turn.failed"
        ? { error: { code: settled.data.code, message: settled.data.message } }
        : {}),
      result: view.result,
      question: view.question,
      pending: pending.map((a) => a.id),
    });
    if (!options.keyboard || status !== "completed") return done();

    for (const approval of pending) {
      const decision = await askDecision(options, approval);
      // Resolves once the decision is settled: after the apply for an approval, at once for a
      // denial. Its events are then printed up to the one that settled it.
      const settled = await backend.decide(approval.id, decision);
      await follow((e) => settlesApproval(e, approval.id));
      options.say(`approval ${approval.id}: ${settled.status}`);
    }
    if (!view.question) {
      if (pending.length === 0) return done();
      const after = await backend.session(sessionId);
      return { ...done(), result: after.result, pending: [] };
    }
    const answer = await askQuestion(options, view.question);
    turnId = await backend.sendTurn(sessionId, { source: "user", answer });
  }
}
