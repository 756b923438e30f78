import type { ApprovalCard } from "@opencomputer/agent";
import { assertJsonCompatible } from "@opencomputer/agent/internal";

/** The card limits: a title, an optional summary, at most 20 facts. */
export const CARD_LIMITS = {
  titleChars: 200,
  summaryChars: 2000,
  facts: 20,
  factChars: 500,
} as const;

/** Checks what `preview` returned; returns the card or a message saying what is wrong. */
export function checkCard(value: unknown, tool: string): ApprovalCard | string {
  try {
    assertJsonCompatible(value, "$");
  } catch (error) {
    return `${tool}'s preview returned a card that is not JSON-compatible: ${(error as Error).message}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `${tool}'s preview must return a card {title, summary?, facts?}`;
  }
  const card = value as Record<string, unknown>;
  for (const key of Object.keys(card)) {
    if (!["title", "summary", "facts"].includes(key))
      return `${tool}'s card has an unknown field "${key}"`;
  }
  const { title, summary, facts } = card;
  if (typeof title !== "string" || title.trim() === "" || title.length > CARD_LIMITS.titleChars) {
    return `${tool}'s card needs a title of 1 to ${CARD_LIMITS.titleChars} characters`;
  }
  if (
    summary !== undefined &&
    (typeof summary !== "string" || summary.length > CARD_LIMITS.summaryChars)
  ) {
    return `${tool}'s card summary must be a string of at most ${CARD_LIMITS.summaryChars} characters`;
  }
  if (facts !== undefined) {
    if (!Array.isArray(facts) || facts.length > CARD_LIMITS.facts) {
      return `${tool}'s card may have at most ${CARD_LIMITS.facts} facts`;
    }
    for (const [i, fact] of facts.entries()) {
      const f = fact as Record<string, unknown>;
      if (
        typeof f !== "object" ||
        f === null ||
        typeof f.label !== "string" ||
        typeof f.value !== "string" ||
        f.label.length > CARD_LIMITS.factChars ||
        f.value.length > CARD_LIMITS.factChars
      ) {
        return `${tool}'s card facts[${i}] must be {label, value} strings of at most ${CARD_LIMITS.factChars} characters`;
      }
    }
  }
  return card as unknown as ApprovalCard;
}
