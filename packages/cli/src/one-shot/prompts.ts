// Asking the person at the keyboard: an open question (a number picks an option) and an
// approval card (y/n). Each prompt starts on a line of its own, below everything printed.

import type { Answer } from "@opencomputer/agent";
import type { ApprovalCard, OpenQuestion } from "./backend.ts";
import type { Keyboard } from "./keyboard.ts";

export interface PromptOptions {
  say(line: string): void;
  keyboard?: Keyboard;
  flush?(): Promise<void>;
}

export async function askQuestion(options: PromptOptions, q: OpenQuestion): Promise<Answer> {
  await options.flush?.();
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

export async function askDecision(
  options: PromptOptions,
  a: ApprovalCard,
): Promise<"approve" | "deny"> {
  await options.flush?.();
  options.say(`\n! approval needed (${a.tool}): ${a.card.title}`);
  if (a.card.summary) options.say(`  ${a.card.summary}`);
  for (const f of a.card.facts ?? []) options.say(`  ${f.label}: ${f.value}`);
  for (;;) {
    const line = (await options.keyboard!.ask("approve? [y/n]: ")).toLowerCase();
    if (line === "y" || line === "yes") return "approve";
    if (line === "n" || line === "no") return "deny";
  }
}
