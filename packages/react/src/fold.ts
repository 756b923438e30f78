import type { EventOf } from "@opencomputer/protocol";
import { foldInspect, type InspectState } from "./fold-inspect.ts";
import type { SessionEvent } from "./types.ts";

// The session's event log folded into what a person reads: a conversation timeline, the open
// question and the approvals. Pure and synchronous so it is tested without a browser, and so a
// page reloaded mid-stream rebuilds exactly the same view from the same events.

import type {
  AgentState,
  Approval,
  ItemBase0,
  MemorySave,
  Message,
  Question,
  SubagentLink,
  TimelineItem,
} from "./agent-state.ts";

export {
  type AgentState,
  type Approval,
  emptyState,
  type MemorySave,
  type Message,
  type Question,
  type SubagentLink,
  type TimelineItem,
} from "./agent-state.ts";

/**
 * Folds events in. Events at or below the cursor are skipped (a repeated page or an overlapping
 * poll never duplicates anything); an event past `cursor + 1` stops the fold with `gap` set,
 * so nothing is shown out of order. Returns the same object when nothing changed.
 */
export function foldEvents(state: AgentState, events: readonly SessionEvent[]): AgentState {
  const fresh = events.filter((e) => e.seq > state.cursor);
  if (fresh.length === 0) return state.gap ? { ...state, gap: false } : state;
  const b = new Builder(state);
  for (const event of fresh) {
    if (event.seq !== b.cursor + 1) {
      b.gap = true;
      break;
    }
    b.apply(event);
    b.cursor = event.seq;
  }
  return b.finish();
}

const RUNNING_STATUSES = new Set(["running", "waiting_runtime"]);

/**
 * What the session waits for a person to do: answer its open question, or decide an approval
 * (pending, or unconfirmed: retry or dismiss). The same rule as the list rows' `waitingFor`.
 */
export function waitingFor(state: Pick<AgentState, "question" | "approvals">) {
  if (state.question) return "answer" as const;
  return state.approvals.some((a) => a.status === "pending" || a.status === "unconfirmed")
    ? ("approval" as const)
    : null;
}

/** True while a turn is queued or running (the hook polls faster then). */
export function isBusy(state: AgentState): boolean {
  return state.openTurns.length > 0 || RUNNING_STATUSES.has(state.status ?? "");
}

class Builder {
  cursor: number;
  gap = false;
  private items: TimelineItem[];
  private index = new Map<string, number>();
  private question: Question | null;
  private approvals: Map<string, Approval>;
  private status: string | null;
  private openTurns: Set<string>;
  private inspect: InspectState;
  private memorySaves: MemorySave[];

  constructor(state: AgentState) {
    this.inspect = { renders: state.renders, egress: state.egress, usage: state.usage ?? [] };
    this.cursor = state.cursor;
    this.items = state.items.slice();
    for (const [i, item] of this.items.entries()) this.index.set(item.key, i);
    this.question = state.question;
    this.approvals = new Map(state.approvals.map((a) => [a.id, a]));
    this.status = state.status;
    this.openTurns = new Set(state.openTurns);
    this.memorySaves = state.memorySaves ?? [];
  }

  finish(): AgentState {
    const messages: Message[] = [];
    for (const item of this.items) {
      if (item.kind === "user" && item.text)
        messages.push({ id: item.key, role: "user", text: item.text });
      if (item.kind === "assistant")
        messages.push({ id: item.key, role: "assistant", text: item.text });
    }
    return {
      cursor: this.cursor,
      items: this.items,
      messages,
      question: this.question,
      approvals: [...this.approvals.values()],
      status: this.status,
      openTurns: [...this.openTurns],
      gap: this.gap,
      renders: this.inspect.renders,
      egress: this.inspect.egress,
      usage: this.inspect.usage,
      memorySaves: this.memorySaves,
    };
  }

  private get(key: string): TimelineItem | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  /** Adds an item, or replaces the one with the same key (items never move once placed). */
  private put(item: TimelineItem): void {
    const i = this.index.get(item.key);
    if (i === undefined) {
      this.index.set(item.key, this.items.length);
      this.items.push(item);
    } else {
      this.items[i] = item;
    }
  }

  private patchApproval(id: string, patch: Partial<Approval>): void {
    const current = this.approvals.get(id);
    if (current) this.approvals.set(id, { ...current, ...patch });
  }

  apply(e: SessionEvent): void {
    const base = { seq: e.seq, ...(e.turnId ? { turnId: e.turnId } : {}) };
    switch (e.type) {
      case "session.status_changed":
        this.status = e.data.to;
        return;
      case "memory.saved":
        // A new array only when one arrives, so an unchanged list keeps its identity.
        this.memorySaves = [...this.memorySaves, { ...base, ...e.data }];
        return;
      case "session.ended":
        this.status = "ended";
        this.openTurns.clear();
        this.put({ ...base, kind: "notice", key: `ended:${e.seq}`, text: "Session ended" });
        return;
      case "message.received": {
        const input = e.data.input;
        if (e.turnId) this.openTurns.add(e.turnId);
        const answer = input.answer;
        const text = input.text ?? (answer ? (answer.text ?? answer.value ?? "") : "");
        this.put({
          ...base,
          kind: "user",
          key: `in:${e.turnId ?? e.seq}`,
          text,
          input,
          mode: e.data.mode,
        });
        return;
      }
      case "turn.queued":
      case "turn.started":
        if (e.turnId) this.openTurns.add(e.turnId);
        return;
      case "turn.completed":
        if (e.turnId) this.openTurns.delete(e.turnId);
        this.closeStreaming(e.turnId);
        return;
      case "turn.failed":
      case "turn.cancelled":
        this.settleTurn(e, base);
        return;
      case "message.delta":
      case "message.completed": {
        const key = e.data.messageId;
        const current = this.get(key);
        const before =
          e.type === "message.delta" && current?.kind === "assistant" ? current.text : "";
        this.put({
          ...base,
          ...(current ? { seq: current.seq } : {}),
          kind: "assistant",
          key,
          text: before + e.data.text,
          streaming: e.type === "message.delta",
        });
        return;
      }
      case "tool.started":
        if (e.data.tool === "ask") return;
        this.put({
          ...base,
          kind: "tool",
          key: `call:${e.data.callId}`,
          callId: e.data.callId,
          tool: e.data.tool,
          title: e.data.title,
          input: e.data.input,
          status: "running",
          progress: [],
        });
        return;
      case "tool.progress":
      case "tool.completed":
      case "tool.failed":
        this.settleTool(e);
        return;
      case "question.asked":
      case "question.answered":
      case "question.closed":
        this.applyQuestion(e, base);
        return;
      case "subagent.started":
      case "subagent.waiting":
      case "subagent.completed":
      case "subagent.failed":
        this.linkSubagent(e);
        return;
      default:
        if (e.type.startsWith("approval.")) this.applyApproval(e, base);
        // Renders, usage and requests through connections go to the inspector; other types
        // (runtime, and types newer than this client) are informational.
        else this.inspect = foldInspect(this.inspect, e);
        return;
    }
  }

  private settleTurn(e: EventOf<"turn.failed"> | EventOf<"turn.cancelled">, base: ItemBase0): void {
    if (e.turnId) this.openTurns.delete(e.turnId);
    this.closeStreaming(e.turnId);
    const failed = e.type === "turn.failed" ? e.data : undefined;
    const detail = failed?.tool
      ? `tool ${failed.tool}`
      : failed?.model
        ? `model ${failed.model}`
        : undefined;
    this.put({
      ...base,
      kind: "turn",
      key: `settled:${e.turnId ?? e.seq}`,
      status: failed ? "failed" : "cancelled",
      code: e.type === "turn.failed" ? e.data.code : e.data.reason,
      ...(failed ? { message: failed.message } : detail ? { message: detail } : {}),
    });
  }

  private settleTool(
    e: EventOf<"tool.progress"> | EventOf<"tool.completed"> | EventOf<"tool.failed">,
  ): void {
    const current = this.get(`call:${e.data.callId}`);
    if (current?.kind !== "tool") return;
    if (e.type === "tool.progress") {
      this.put({ ...current, progress: [...current.progress, e.data.metadata] });
    } else if (e.type === "tool.completed") {
      this.put({
        ...current,
        status: "completed",
        output: e.data.output,
        result: e.data.result === true,
      });
    } else {
      this.put({
        ...current,
        status: "failed",
        message: e.data.message,
        ...(e.data.settledBy ? { settledBy: e.data.settledBy } : {}),
      });
    }
  }

  private linkSubagent(
    e:
      | EventOf<"subagent.started">
      | EventOf<"subagent.waiting">
      | EventOf<"subagent.completed">
      | EventOf<"subagent.failed">,
  ): void {
    const current = this.get(`call:${e.data.callId}`);
    if (current?.kind !== "tool") return;
    const subagent: SubagentLink = { agentId: e.data.agentId, sessionId: e.data.sessionId };
    if (e.type === "subagent.waiting") {
      const { reason, questionId, approvalId, text } = e.data;
      subagent.waiting = {
        reason,
        ...(questionId ? { questionId } : {}),
        ...(approvalId ? { approvalId } : {}),
        ...(text ? { text } : {}),
      };
    }
    this.put({ ...current, subagent });
  }

  private applyQuestion(
    e: EventOf<"question.asked"> | EventOf<"question.answered"> | EventOf<"question.closed">,
    base: ItemBase0,
  ): void {
    const key = `q:${e.data.questionId}`;
    if (e.type === "question.asked") {
      this.question = {
        id: e.data.questionId,
        ...(e.turnId ? { turnId: e.turnId } : {}),
        text: e.data.text,
        options: e.data.options,
        askedAt: e.data.askedAt,
      };
      this.put({
        ...base,
        kind: "question",
        key,
        questionId: e.data.questionId,
        text: e.data.text,
      });
      return;
    }
    if (this.question?.id === e.data.questionId) this.question = null;
    const item = this.get(key);
    if (item?.kind !== "question") return;
    const answered = e.type === "question.answered" ? "answered" : `closed: ${e.data.reason}`;
    this.put({ ...item, answered });
  }

  private applyApproval(e: SessionEvent, base: ItemBase0): void {
    switch (e.type) {
      case "approval.requested":
        this.approvals.set(e.data.approvalId, {
          id: e.data.approvalId,
          ...(e.turnId ? { turnId: e.turnId } : {}),
          callId: e.data.callId,
          tool: e.data.tool,
          input: e.data.input,
          card: e.data.card,
          status: "pending",
          attempts: 0,
        });
        this.put({
          ...base,
          kind: "approval",
          key: `apr:${e.data.approvalId}`,
          approvalId: e.data.approvalId,
        });
        // The proposing call is shown by its card; its tool row would say the same thing twice.
        this.drop(`call:${e.data.callId}`);
        return;
      case "approval.decided": {
        const { decidedBy } = e.data.decision;
        this.patchApproval(e.data.approvalId, {
          status: e.data.status,
          ...(decidedBy ? { decidedBy } : {}),
        });
        return;
      }
      case "approval.applying":
        this.patchApproval(e.data.approvalId, { status: "applying", attempts: e.data.attempt });
        return;
      case "approval.retried":
        this.patchApproval(e.data.approvalId, { status: "approved" });
        return;
      case "approval.warning":
        this.patchApproval(e.data.approvalId, { warning: e.data.message });
        return;
      case "approval.applied":
        this.patchApproval(e.data.approvalId, { status: "applied", outcome: e.data.outcome });
        return;
      case "approval.failed":
      case "approval.unconfirmed":
        this.patchApproval(e.data.approvalId, {
          status: e.type === "approval.failed" ? "failed" : "unconfirmed",
          message: e.data.message,
        });
        return;
      case "approval.dismissed":
        this.patchApproval(e.data.approvalId, { status: "dismissed" });
        return;
      default:
        return;
    }
  }

  private drop(key: string): void {
    const i = this.index.get(key);
    if (i === undefined) return;
    this.items.splice(i, 1);
    this.index.clear();
    for (const [j, item] of this.items.entries()) this.index.set(item.key, j);
  }

  /** A settled turn has no message still streaming (a cancelled stream never completes). */
  private closeStreaming(turnId: string | undefined): void {
    if (!turnId) return;
    for (const [i, item] of this.items.entries()) {
      if (item.kind === "assistant" && item.streaming && item.turnId === turnId)
        this.items[i] = { ...item, streaming: false };
    }
  }
}
