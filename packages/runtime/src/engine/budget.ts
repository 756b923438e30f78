// Session budgets: what a session may spend (`POST /sessions {budget}`), recorded in its
// `session.created` event and enforced by the turn loop around each model step, together with
// the operator's budgets per label value (label-budgets.ts). What the session
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
import { budgetsFor, periodOf } from "./label-budgets.ts";
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

/** Why `spent` is over `budget`, or null while it is within it. `who`: "The session", … */
export function overBudget(budget: Budget, spent: Spent, who = "The session"): string | null {
  if (budget.maxTokens !== undefined && spent.tokens >= budget.maxTokens)
    return `${who} used ${spent.tokens} tokens of its budget of ${budget.maxTokens}`;
  if (budget.maxCostUsd !== undefined) {
    if (spent.unpricedSteps > 0)
      return `${who} has a cost budget but used a model with no price; add the model to opencomputer/prices.json`;
    if (spent.costUsd >= budget.maxCostUsd)
      return `${who} spent $${spent.costUsd.toFixed(6)} of its budget of $${budget.maxCostUsd}`;
  }
  return null;
}

/** One limit a turn is held to: the session's budget, or a label value's for this period. */
interface Limit {
  budget: Budget;
  spent: Spent;
  who: string;
}

// Per turn: a new scope reads again, so turns run by other processes are counted.
const limitsOf = new WeakMap<TurnScope, Limit[]>();

/** Records a step's usage against the turn's running totals (when any budget applies). */
export function noteUsage(scope: TurnScope, usage: EventData<"usage.recorded">): void {
  for (const limit of limitsOf.get(scope) ?? []) addUsage(limit.spent, usage);
}

async function readLimits(scope: TurnScope): Promise<Limit[]> {
  const limits: Limit[] = [];
  const budget = scope.creation.budget;
  if (budget) {
    const spent = await readSpent(scope.ctx.store, scope.sessionId);
    limits.push({ budget, spent, who: "The session" });
  }
  const byLabel = scope.ctx.labelBudgets;
  if (byLabel && byLabel.budgets.length > 0) {
    const session = await scope.ctx.store.getSession(scope.sessionId);
    const now = (byLabel.now ?? Date.now)();
    for (const b of session ? budgetsFor(byLabel.budgets, session.labels) : []) {
      const { total } = await byLabel.usage.rollUp({
        projectId: session!.projectId,
        ...periodOf(b.period, now),
        label: { key: b.label, value: b.value },
      });
      limits.push({
        budget: b,
        spent: {
          tokens: total.inputTokens + total.outputTokens,
          costUsd: total.costUsd,
          unpricedSteps: total.unpricedSteps,
        },
        who: `Label ${b.label}=${b.value} this ${b.period}`,
      });
    }
  }
  return limits;
}

/**
 * True while the session may take another model step. When its budget is spent the turn fails
 * `budget_exceeded` here (everything already written stays) and false is returned. A session
 * without a budget costs nothing: no read, no write.
 */
export async function withinBudget(scope: TurnScope): Promise<boolean> {
  if (!scope.creation.budget && !scope.ctx.labelBudgets?.budgets.length) return true;
  let limits = limitsOf.get(scope);
  if (!limits) {
    limits = await readLimits(scope);
    limitsOf.set(scope, limits);
  }
  let why: string | null = null;
  for (const limit of limits) why ??= overBudget(limit.budget, limit.spent, limit.who);
  if (why === null) return true;
  const error: TurnError = { code: "budget_exceeded", message: why };
  await failTurn(scope, error);
  return false;
}
