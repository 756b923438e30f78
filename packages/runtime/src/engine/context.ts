import type { AgentExecution, Egress } from "../ports/agent-execution.ts";
import type { AgentResolver } from "../ports/agent-resolver.ts";
import type { BuiltInTool } from "../ports/built-in-tool.ts";
import type { MemoryStore } from "../ports/memory-store.ts";
import type { ModelResolver } from "../ports/model.ts";
import type { EventRecord } from "../ports/records.ts";
import type { Store, WriteBatch } from "../ports/store.ts";
import type { Tracing } from "../ports/tracing.ts";
import type { Deadlines } from "./deadlines.ts";
import type { ProcessProbe } from "./incarnation.ts";
import type { LabelBudgetOptions } from "./label-budgets.ts";
import type { McpSettings } from "./mcp-turn.ts";
import type { HttpMemorySettings } from "./memory-http.ts";
import type { Notifier } from "./notifier.ts";
import type { CreationMemo } from "./session-data.ts";
import type { SubagentHost } from "./subagent-host.ts";
import type { WorkerLosses } from "./worker-loss.ts";

/** Who is calling out: the egress token names the session (and the turn, for its events). */
export interface EgressRequest {
  sessionId: string;
  agentId: string;
  deploymentId: string;
  turnId?: string;
  /** The tool call running the code, what part of the tool it is, and an apply's decision. */
  callId?: string;
  phase?: "run" | "preview" | "apply";
  decisionId?: string;
}

/**
 * The gateway URL and a fresh token for one execution of agent code, and optionally `revoke`,
 * which the engine calls when that execution settles so the token dies with its call.
 */
export type EgressGrant = Egress & { revoke?: () => void | Promise<void> };

/** Gives each execution of agent code the gateway URL and a fresh per-session token. */
export type EgressSource = (
  request: EgressRequest,
) => EgressGrant | undefined | Promise<EgressGrant | undefined>;

export interface Logger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** What every part of the engine shares within one runtime process. */
export interface EngineContext {
  store: Store;
  agents: AgentResolver;
  /** Where agent code runs: in this process, or in worker processes (ports/agent-execution.ts). */
  execution: AgentExecution;
  /** The egress values sent along with every run / preview / apply; none without a gateway. */
  egress?: EgressSource;
  models: ModelResolver;
  /** Memory documents and session bindings; without it sessions cannot bind memory. */
  memory?: MemoryStore;
  /** Time limits of HTTP memory providers' operations. */
  httpMemory?: HttpMemorySettings;
  /** Budgets per label value and the usage they are checked against (label-budgets.ts). */
  labelBudgets?: LabelBudgetOptions;
  /** The model of an agent that selects none (`DEFAULT_MODEL` unless the options say). */
  defaultModel: string;
  /** The MCP client and its time limits; absent when the runtime was given none. */
  mcp?: McpSettings;
  notifier: Notifier;
  log: Logger;
  /** Spans of turns, steps, model and tool calls; NO_TRACING when tracing is off. */
  tracing: Tracing;
  /** The lease holder this runtime writes; with its incarnation by default (incarnation.ts). */
  runtimeId: string;
  /** Reads this machine's processes, to tell a dead lease holder from a live one. */
  processProbe: ProcessProbe;
  leaseMs: number;
  maxSteps: number;
  /** How long an interrupt waits for running tools to honour their signal before settling. */
  cancelGraceMs: number;
  builtInToolIds: readonly string[];
  /** Built-in ids every render gets without useTool, unless its deployment says otherwise. */
  defaultTools: readonly string[];
  /** Runtime-provided tools by id (`ask` is handled by the engine itself). */
  builtInTools: ReadonlyMap<string, BuiltInTool>;
  /** Worker losses per turn in this runtime (a turn that keeps losing its worker fails). */
  workerLosses: WorkerLosses;
  /**
   * The runtime's background deadlines (lease renewals, idle releases), keyed by the callback
   * to run; they do not keep the process alive.
   */
  timers: Deadlines<() => void>;
  /** What each session was created with (its data, its parent), remembered. */
  creations: CreationMemo;
  /** Child sessions for delegation calls; set once the sessions API exists (sessions-api.ts). */
  subagents?: SubagentHost;
}

/** Applies a batch and tells local waiters about the events it appended. */
export async function write(
  ctx: EngineContext,
  sessionId: string,
  batch: WriteBatch,
): Promise<EventRecord[]> {
  const events = await ctx.store.apply(sessionId, batch);
  if (events.length > 0) ctx.notifier.publish(sessionId, events);
  return events;
}
