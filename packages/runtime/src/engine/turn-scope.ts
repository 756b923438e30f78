import type { ToolCallRecord, TurnRecord } from "../ports/records.ts";
import type { Fence } from "../ports/store.ts";
import type { SpanHandle } from "../ports/tracing.ts";
import type { OpenQuestion } from "./ask.ts";
import type { EngineContext } from "./context.ts";
import type { Conversation } from "./conversation.ts";
import type { TurnMemory } from "./memory-recall.ts";
import type { SessionCreation } from "./session-data.ts";
import type { KnownState } from "./settle.ts";

/** Everything a running turn's parts need: who runs it, under which lease, and its abort signal. */
export interface TurnScope {
  ctx: EngineContext;
  sessionId: string;
  agentId: string;
  deploymentId: string;
  /** The session's source (`api`, `playground`, `schedule`, `webhook`). */
  source: string;
  /** Where the session's agent code runs: microvm sessions get a sandboxed worker. */
  executionMode: "default" | "microvm";
  turn: TurnRecord;
  fence: Fence;
  signal: AbortSignal;
  /** Resolves when `signal` aborts (the worker settles it), for waits that race the abort. */
  aborted: Promise<void>;
  conversation: Conversation;
  /** What the session was created with: its data (`useSessionData`) and, for a subagent, parent. */
  creation: SessionCreation;
  /** Built-in tool ids this session may select (`ask` is not offered to microvm sessions). */
  builtInToolIds: readonly string[];
  /** Built-in ids every render of this turn gets without useTool (default-tools.ts). */
  defaultTools?: readonly string[];
  /** Tool executions still running: an interrupt gives them a grace period to honour `signal`. */
  inflight: Set<Promise<unknown>>;
  /** Set when a steering input waits to be folded into this turn before the next model step. */
  steering: { pending: boolean };
  /** The question an `ask` call of this step will end the turn with. */
  question?: { call: ToolCallRecord; question: OpenQuestion };
  /** The session's memory bindings, read at the turn's first recall (memory-recall.ts). */
  memory?: TurnMemory;
  /** This process's span of the turn, and of the step running now (ports/tracing.ts). */
  span?: SpanHandle;
  stepSpan?: SpanHandle;
}

/** What the turn's span names besides its ids. */
export function traceOf(scope: TurnScope) {
  return { agentId: scope.agentId, deploymentId: scope.deploymentId };
}

/** The batch guard every write of a running turn carries (invariant 2). */
export function guard(scope: TurnScope) {
  return { fence: scope.fence, expectTurn: { id: scope.turn.id, status: ["running"] as const } };
}

/**
 * What the worker knows about its session while a turn runs under its lease: the session is
 * `running` (the turn's start wrote it) and the turn's calls are in the conversation. Settling
 * trusts it first; the write's guards refuse it if anything changed meanwhile.
 */
export function knownState(scope: TurnScope): KnownState {
  const openCalls: ToolCallRecord[] = [];
  for (const call of scope.conversation.calls.values()) {
    if (call.turnId === scope.turn.id && call.status === "started") openCalls.push(call);
  }
  return { sessionStatus: "running", openCalls };
}
