import type { SessionListRow } from "@opencomputer/protocol";
import type { SessionStatus, TurnRecord } from "../ports/records.ts";
import type { Store } from "../ports/store.ts";
import { InputError } from "./input.ts";
import { toSessionView, toTurnView } from "./view.ts";

export interface ListSessionsOptions {
  /** Only this project's sessions; the server always sets it from the caller's key. */
  projectId?: string;
  agentId?: string;
  status?: SessionStatus;
  labels?: Record<string, string>;
  /** Only sessions waiting for a person (an open question, a pending or unconfirmed approval). */
  waiting?: boolean;
  /** 1..100, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** A row of `GET /sessions`: the session without its turns, with what it is doing now. */
export type { SessionListRow };

const STATUSES = new Set(["new", "idle", "running", "waiting_runtime", "failed", "ended"]);

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    const v = value as { createdAt?: unknown; id?: unknown };
    if (typeof v.createdAt === "string" && typeof v.id === "string")
      return { createdAt: v.createdAt, id: v.id };
  } catch {
    // reported below
  }
  throw new InputError("invalid_input", "cursor: not a cursor this API returned", {
    path: "cursor",
  });
}

/** Sessions newest first (createdAt desc, then id desc): a stable order for cursors. */
export async function listSessions(store: Store, options: ListSessionsOptions = {}) {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new InputError("invalid_input", "limit: must be an integer from 1 to 100", {
      path: "limit",
    });
  }
  if (options.status !== undefined && !STATUSES.has(options.status)) {
    throw new InputError("invalid_input", `status: must be one of ${[...STATUSES].join(", ")}`, {
      path: "status",
    });
  }
  const rows = await store.listSessions({
    limit: limit + 1,
    ...(options.projectId !== undefined ? { projectId: options.projectId } : {}),
    ...(options.agentId ? { agentId: options.agentId } : {}),
    ...(options.status ? { status: options.status } : {}),
    ...(options.labels ? { labels: options.labels } : {}),
    ...(options.waiting === true ? { waiting: true } : {}),
    ...(options.cursor ? { cursor: decodeCursor(options.cursor) } : {}),
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const sessions: SessionListRow[] = await Promise.all(
    page.map(async (s) => {
      const {
        turns: _turns,
        memory: _memory,
        data: _data,
        parent: _parent,
        ...view
      } = toSessionView(s, []);
      // The active turns and the last settled one, not every turn: a page of long sessions
      // would otherwise read all their turns.
      const [active, last, first, waitingFor] = await Promise.all([
        store.listActiveTurns(s.id),
        store.lastSettledTurn(s.id),
        store.firstTurn(s.id),
        s.question !== null ? ("answer" as const) : waitingForApproval(store, s.id),
      ]);
      return {
        ...view,
        activity: activityOf(active, last),
        waitingFor,
        firstMessage: first ? firstText(first.input) : null,
      };
    }),
  );
  const nextCursor =
    rows.length > limit && last
      ? Buffer.from(JSON.stringify({ createdAt: last.createdAt, id: last.id })).toString(
          "base64url",
        )
      : null;
  return { sessions, nextCursor };
}

/** An approval a person has to decide: pending, or unconfirmed (retry or dismiss). */
async function waitingForApproval(store: Store, sessionId: string): Promise<"approval" | null> {
  const approvals = await store.listApprovals(sessionId);
  return approvals.some((a) => a.status === "pending" || a.status === "unconfirmed")
    ? "approval"
    : null;
}

/** What a person typed first: the text, or an answer's text or chosen value. */
function firstText(input: TurnRecord["input"]): string | null {
  const text = input.text ?? input.answer?.text ?? input.answer?.value;
  return typeof text === "string" && text.length > 0 ? text : null;
}

function activityOf(
  active: TurnRecord[],
  last: TurnRecord | undefined,
): SessionListRow["activity"] {
  return {
    activeTurnId: active.find((t) => t.status === "running")?.id ?? null,
    queued: active.filter((t) => t.status === "queued").length,
    lastSettledTurn: last ? toTurnView(last) : null,
  };
}
