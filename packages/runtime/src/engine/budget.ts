// Session budgets: what a session may spend (`POST /sessions {budget}`), recorded in its
// `session.created` event and enforced by the turn loop around each model step. What the session
// has spent is read once per turn from its own `usage.recorded` events (any process may have run
// its earlier turns) and then kept up to date with each step this turn records.
//
// A step's usage is only known once the model answered, so a budget can be overrun by at most
// that one step; it is never overrun by a second one. A step without a price (its model is not in
// the price table) cannot be checked against `maxCostUsd`, so it exhausts a cost budget rather
// than being counted as free: the turn fails `budget_exceeded` and the operator adds the price.

import type { Budget, EventData, TurnError } from "@opencomputer/protocol";
import type { Store } from "../ports/store.ts";
import { InputError } from "./input.ts";
import { failTurn } from "./turn-render.ts";
import type { TurnScope } from "./turn-scope.ts";

/** What a session spent so far, as the budget counts it. */
export interface Spent {
  tokens: number;
  costUsd: number;
  unpricedSteps: number;
}

const fail = (path: string, message: string): never => {
  throw new InputError("invalid_input", `${path}: ${message}`, { path });
};

/** Checks `budget` from a client: `{maxCostUsd?, maxTokens?}`, each positive. */
export function validateBudget(raw: unknown, path = "budget"): Budget | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return fail(path, "must be an object {maxCostUsd?, maxTokens?}");
  const budget: Budget = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === "maxCostUsd") {
      if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
        fail(`${path}.maxCostUsd`, "must be a number of US dollars greater than 0");
      budget.maxCostUsd = value as number;
    } else if (key === "maxTokens") {
      if (!Number.isSafeInteger(value) || (value as number) <= 0)
        fail(`${path}.maxTokens`, "must be a whole number of tokens greater than 0");
      budget.maxTokens = value as number;
    } else {
      fail(`${path}.${key}`, "is not a budget field (allowed: maxCostUsd, maxTokens)");
    }
  }
  if (budget.maxCostUsd === undefined && budget.maxTokens === undefined)
    fail(path, "needs maxCostUsd or maxTokens");
  return budget;
}

/** Adds one step's `usage.recorded` to `spent`. */
export function addUsage(spent: Spent, usage: EventData<"usage.recorded">): void {
  spent.tokens += usage.inputTokens + usage.outputTokens;
  if (typeof usage.costUsd === "number") spent.costUsd += usage.costUsd;
  else spent.unpricedSteps += 1;
}

/** The session's spending from its log. */
export async function readSpent(store: Store, sessionId: string): Promise<Spent> {
  const spent: Spent = { tokens: 0, costUsd: 0, unpricedSteps: 0 };
  const page = 500;
  for (let after = 0; ; ) {
    const events = await store.readEvents(sessionId, after, page);
    for (const event of events) if (event.type === "usage.recorded") addUsage(spent, event.data);
    if (events.length < page) return spent;
    after = events[events.length - 1]!.seq;
  }
}

/** Why `spent` is over `budget`, or null while it is within it. */
export function overBudget(budget: Budget, spent: Spent): string | null {
  if (budget.maxTokens !== undefined && spent.tokens >= budget.maxTokens)
    return `The session used ${spent.tokens} tokens of its budget of ${budget.maxTokens}`;
  if (budget.maxCostUsd !== undefined) {
    if (spent.unpricedSteps > 0)
      return "The session has a cost budget but used a model with no price; add the model to opencomputer/prices.json";
    if (spent.costUsd >= budget.maxCostUsd)
      return `The session spent $${spent.costUsd.toFixed(6)} of its budget of $${budget.maxCostUsd}`;
  }
  return null;
}

// Per turn: a new scope reads the log again, so turns run by other processes are counted.
const spentOf = new WeakMap<TurnScope, Spent>();

/** Records a step's usage against the turn's running total (when the session has a budget). */
export function noteUsage(scope: TurnScope, usage: EventData<"usage.recorded">): void {
  const spent = spentOf.get(scope);
  if (spent) addUsage(spent, usage);
}

/**
 * True while the session may take another model step. When its budget is spent the turn fails
 * `budget_exceeded` here (everything already written stays) and false is returned. A session
 * without a budget costs nothing: no read, no write.
 */
export async function withinBudget(scope: TurnScope): Promise<boolean> {
  const budget = scope.creation.budget;
  if (!budget) return true;
  let spent = spentOf.get(scope);
  if (!spent) {
    spent = await readSpent(scope.ctx.store, scope.sessionId);
    spentOf.set(scope, spent);
  }
  const why = overBudget(budget, spent);
  if (why === null) return true;
  const error: TurnError = { code: "budget_exceeded", message: why };
  await failTurn(scope, error);
  return false;
}
