// The port for reading model usage across sessions: the roll-up behind `GET /usage` and
// `opencomputer usage`. Separate from `Store` because it reads across sessions and writes nothing:
// both SQL stores fill a `usage` table from `usage.recorded` events with a database trigger, in
// the same transaction as the event, and implement this once (@opencomputer/sql-store); the
// conformance suite is @opencomputer/testkit/usage-conformance.

import type { UsageGroup, UsageTotals } from "@opencomputer/protocol";

export type { UsageGroup, UsageTotals };

/** How a roll-up groups its steps: by the session's agent, by session, or by a label's value. */
export type UsageGroupBy = { by: "agent" } | { by: "session" } | { by: "label"; key: string };

export interface UsageQuery {
  projectId: string;
  /** ISO 8601 in UTC; steps recorded at or after `from` and before `to`. */
  from: string;
  to: string;
  groupBy?: UsageGroupBy;
  /** Only steps of sessions whose label `key` is `value` now (label budgets). */
  label?: { key: string; value: string };
}

export interface UsageRollUp {
  total: UsageTotals;
  /** One per key, ordered by key (a label's missing value, null, last); empty without groupBy. */
  groups: UsageGroup[];
}

export interface UsageStore {
  rollUp(query: UsageQuery): Promise<UsageRollUp>;
}
