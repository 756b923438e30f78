import type { SessionListRow } from "@opencomputer/react";

/** How the session's last turn ended, in words a person reads in a list. */
export function outcomeOf(row: SessionListRow): { text: string; tone: "ok" | "bad" | "quiet" } {
  if (row.result) return { text: "result reported", tone: "ok" };
  const last = row.activity?.lastSettledTurn;
  if (!last)
    return { text: row.activity?.activeTurnId ? "working" : "no turns yet", tone: "quiet" };
  if (last.status === "failed")
    return { text: `failed${last.error ? ` (${last.error.code})` : ""}`, tone: "bad" };
  if (last.status === "cancelled") return { text: "stopped", tone: "quiet" };
  if (last.outcome === "question") return { text: "asked a question", tone: "quiet" };
  return { text: "answered", tone: "ok" };
}
