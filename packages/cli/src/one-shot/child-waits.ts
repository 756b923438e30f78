// A subagent the turn delegated to waits for a person (`subagent.waiting` in the parent's log).

import type { SessionEvent } from "@opencomputer/protocol";
import type { OneShotBackend } from "./backend.ts";
import { askDecision, askQuestion, type PromptOptions } from "./prompts.ts";

/**
 * A subagent the turn delegated to waits for a person: its question is answered on the child
 * session (the same child goes on), its card decided on the approvals route. The parent's call
 * keeps waiting and completes once the child answered; nothing is sent to the parent.
 */
export async function answerChild(
  backend: OneShotBackend,
  options: PromptOptions,
  e: Extract<SessionEvent, { type: "subagent.waiting" }>,
  answered: Set<string>,
): Promise<void> {
  const waitId = e.data.questionId ?? e.data.approvalId ?? "";
  if (answered.has(waitId)) return;
  answered.add(waitId);
  const { agentId, sessionId, questionId, text, options: choices, approvalId, tool, card } = e.data;
  options.say(`\n(subagent ${agentId}, session ${sessionId})`);
  if (!options.keyboard) {
    options.say(
      questionId
        ? `  waits for an answer to "${text ?? ""}": answer it on session ${sessionId}`
        : `  waits for approval ${approvalId ?? ""}: decide it on the approvals route`,
    );
    return;
  }
  if (questionId) {
    const answer = await askQuestion(options, {
      id: questionId,
      text: text ?? "",
      options: choices ?? [],
    });
    await backend.sendTurn(sessionId, { source: "user", answer });
  } else if (approvalId && card) {
    const decision = await askDecision(options, {
      id: approvalId,
      status: "pending",
      tool: tool ?? "",
      card,
    });
    const settled = await backend.decide(approvalId, decision);
    options.say(`approval ${approvalId}: ${settled.status}`);
  }
}
