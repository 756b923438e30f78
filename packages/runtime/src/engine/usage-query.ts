// What `GET /usage` and `opencomputer usage` accept, checked once for both: a time window and how
// to group. Errors name the query field at fault (`from`, `to`, `groupBy`).

import type { UsageGroupBy } from "../ports/usage-store.ts";
import { InputError } from "./input.ts";

/** The widest window one roll-up covers; a longer period is several calls. */
export const USAGE_MAX_DAYS = 366;
/** The window when `from` is not given: the 30 days before `to`. */
export const USAGE_DEFAULT_DAYS = 30;

const DAY_MS = 86_400_000;
const LABEL_KEY = /^[a-z][a-z0-9_.-]{0,63}$/;
// A calendar date, or a date and time with a zone (Z or ±hh:mm): never a local time.
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export interface UsageWindowInput {
  from?: string | null;
  to?: string | null;
  groupBy?: string | null;
}

export interface UsageWindow {
  from: string;
  to: string;
  groupBy?: UsageGroupBy;
  /** `groupBy` as given (`agent`, `session`, `label.<key>`). */
  groupByName?: string;
}

const fail = (path: string, message: string): never => {
  throw new InputError("invalid_query", `${path}: ${message}`, { path });
};

function instant(raw: string, path: string): number {
  if (!DATE.test(raw) && !DATE_TIME.test(raw))
    fail(
      path,
      `${JSON.stringify(raw.slice(0, 40))} is not a date (2026-03-01) or an ISO 8601 time with a zone (2026-03-01T12:00:00Z)`,
    );
  // A calendar date is midnight UTC.
  const ms = Date.parse(DATE.test(raw) ? `${raw}T00:00:00Z` : raw);
  if (Number.isNaN(ms)) fail(path, `${JSON.stringify(raw.slice(0, 40))} is not a valid date`);
  return ms;
}

export function parseGroupBy(raw: string): UsageGroupBy {
  if (raw === "agent" || raw === "session") return { by: raw };
  if (raw.startsWith("label.")) {
    const key = raw.slice("label.".length);
    if (!LABEL_KEY.test(key)) fail("groupBy", `label key must match ${LABEL_KEY}`);
    return { by: "label", key };
  }
  return fail("groupBy", "must be agent, session or label.<key>");
}

/** Checks a roll-up's window: [from, to), `to` defaulting to `now`, `from` to 30 days before. */
export function parseUsageWindow(input: UsageWindowInput, now: number = Date.now()): UsageWindow {
  const to = input.to != null ? instant(input.to, "to") : now;
  const from = input.from != null ? instant(input.from, "from") : to - USAGE_DEFAULT_DAYS * DAY_MS;
  if (from > to) fail("from", "is after to");
  if (to - from > USAGE_MAX_DAYS * DAY_MS)
    fail("from", `the window is longer than ${USAGE_MAX_DAYS} days; ask for shorter periods`);
  const window: UsageWindow = {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
  };
  if (input.groupBy != null) {
    window.groupBy = parseGroupBy(input.groupBy);
    window.groupByName = input.groupBy;
  }
  return window;
}
