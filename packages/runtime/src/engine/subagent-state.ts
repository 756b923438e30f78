// Where a child session of a delegation stands, read from its records: still working, waiting
// for a person (a question or an approval), or done with an answer or a failure. The answer is
// the child's session result when it reported one, else the text it ended with, bounded.

import type { JsonValue } from "@opencomputer/agent";
import type { OpenQuestion } from "@opencomputer/protocol";
import type { ApprovalRecord } from "../ports/records.ts";
import type { Store } from "../ports/store.ts";

/** The child's final text is cut to this many characters in the parent's tool output. */
export const SUBAGENT_TEXT_LIMIT = 16 * 1024;

export type ChildState =
  | { kind: "working" }
  | { kind: "question"; question: OpenQuestion }
  | { kind: "approval"; approval: ApprovalRecord }
  | { kind: "answered"; output: JsonValue }
  | { kind: "failed"; message: string };

const APPLYING = new Set(["approved", "applying"]);

/** The text the child's latest turn ended with, read from its log as it grows. */
export class ChildText {
  private cursor = 0;
  private text = "";

  async read(store: Store, sessionId: string): Promise<string> {
    for (;;) {
      const page = await store.readEvents(sessionId, this.cursor, 500);
      for (const event of page) {
        if (event.type === "turn.started") this.text = "";
        else if (event.type === "message.completed") this.text = event.data.text;
      }
      if (page.length > 0) this.cursor = page[page.length - 1]!.seq;
      if (page.length < 500) return this.text;
    }
  }
}

export async function childState(
  store: Store,
  sessionId: string,
  agentId: string,
  text: ChildText,
): Promise<ChildState> {
  const [session, active] = await Promise.all([
    store.getSession(sessionId),
    store.listActiveTurns(sessionId),
  ]);
  if (!session) return { kind: "failed", message: `The ${agentId} agent's session is gone` };
  if (active.length > 0) return { kind: "working" };
  if (session.status === "ended") {
    return { kind: "failed", message: `The ${agentId} agent's session ended before it answered` };
  }
  if (session.question) return { kind: "question", question: session.question as OpenQuestion };
  const approvals = await store.listApprovals(sessionId);
  const pending = approvals.find((a) => a.status === "pending");
  if (pending) return { kind: "approval", approval: pending };
  if (approvals.some((a) => APPLYING.has(a.status))) return { kind: "working" };
  const last = await store.lastSettledTurn(sessionId);
  if (!last) return { kind: "working" };
  if (last.status === "failed") {
    const why = last.error ? ` (${last.error.code}: ${last.error.message})` : "";
    return { kind: "failed", message: `The ${agentId} agent failed${why}` };
  }
  if (last.status === "cancelled") {
    return { kind: "failed", message: `The ${agentId} agent's turn was cancelled` };
  }
  const final = await text.read(store, sessionId);
  const truncated = final.length > SUBAGENT_TEXT_LIMIT;
  const output: Record<string, JsonValue> = {
    agentId,
    sessionId,
    text: truncated ? final.slice(0, SUBAGENT_TEXT_LIMIT) : final,
  };
  if (truncated) output.truncated = true;
  if (session.result) output.result = session.result.data;
  if (approvals.length > 0) {
    output.approvals = approvals.map((a) => ({ approvalId: a.id, tool: a.tool, status: a.status }));
  }
  return { kind: "answered", output };
}
