import type { Answer } from "@opencomputer/agent";
import type { SessionEvent } from "@opencomputer/protocol";
import type { ApprovalCard, OneShotBackend, OpenQuestion } from "./backend.ts";
import type { Keyboard } from "./keyboard.ts";

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
  const follow = async (until: (e: SessionEvent) => boolean): Promise<SessionEvent> => {
    for (;;) {
      for (const e of await backend.nextEvents(sessionId, cursor)) {
        if (e.seq <= cursor) continue;
        cursor = e.seq;
        options.print(e);
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

async function askQuestion(options: OneShotOptions, q: OpenQuestion): Promise<Answer> {
  options.say(`\n? ${q.text}`);
  q.options.forEach((o, i) => {
    options.say(`  ${i + 1}) ${o.label}`);
  });
  const hint = q.options.length > 0 ? `1-${q.options.length} or type an answer` : "your answer";
  for (;;) {
    const line = await options.keyboard!.ask(`answer (${hint}): `);
    if (line === "") continue;
    // A number picks an option; one that names no option is asked again (not sent as text).
    if (q.options.length > 0 && /^\d+$/.test(line)) {
      const chosen = q.options[Number(line) - 1];
      if (chosen) return { questionId: q.id, value: chosen.value, text: chosen.label };
      options.say(`  there is no option ${line}`);
      continue;
    }
    return { questionId: q.id, text: line };
  }
}

async function askDecision(options: OneShotOptions, a: ApprovalCard): Promise<"approve" | "deny"> {
  options.say(`\n! approval needed (${a.tool}): ${a.card.title}`);
  if (a.card.summary) options.say(`  ${a.card.summary}`);
  for (const f of a.card.facts ?? []) options.say(`  ${f.label}: ${f.value}`);
  for (;;) {
    const line = (await options.keyboard!.ask("approve? [y/n]: ")).toLowerCase();
    if (line === "y" || line === "yes") return "approve";
    if (line === "n" || line === "no") return "deny";
  }
}
