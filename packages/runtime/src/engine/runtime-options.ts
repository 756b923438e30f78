import { createInProcessExecution } from "../agents/in-process.ts";
import { locatedAgents } from "../agents/located.ts";
import { newId } from "../ids.ts";
import type { AgentExecution } from "../ports/agent-execution.ts";
import type { AgentResolver } from "../ports/agent-resolver.ts";
import type { BuiltInTool } from "../ports/built-in-tool.ts";
import type { McpConnector } from "../ports/mcp.ts";
import type { MemoryStore } from "../ports/memory-store.ts";
import type { ModelResolver } from "../ports/model.ts";
import { MODEL_PROVIDED_TOOL_IDS } from "../ports/provider-tools.ts";
import type { Store } from "../ports/store.ts";
import { NO_TRACING, type Tracing } from "../ports/tracing.ts";
import type { WorkSignal } from "../ports/work-signal.ts";
import { ASK_ID } from "./ask.ts";
import type { EgressSource, EngineContext, Logger } from "./context.ts";
import { Deadlines } from "./deadlines.ts";
import { runtimeDefaultTools } from "./default-tools.ts";
import { type ProcessProbe, procProbe, withIncarnation } from "./incarnation.ts";
import type { LabelBudgetOptions } from "./label-budgets.ts";
import { DEFAULT_HTTP_MEMORY, type HttpMemorySettings } from "./memory-http.ts";
import { Notifier } from "./notifier.ts";
import { CreationMemo } from "./session-data.ts";
import { DEFAULT_MODEL } from "./step-model.ts";
import { WorkerLosses } from "./worker-loss.ts";

export interface RuntimeOptions {
  store: Store;
  agents: AgentResolver;
  models: ModelResolver;
  /**
   * The model of an agent that calls no useModel (default `DEFAULT_MODEL`,
   * "anthropic/claude-sonnet-4.6", the platform docs' model).
   */
  defaultModel?: string;
  runtimeId?: string;
  /** How long a session's lease lasts without renewal; another runtime takes over after it. */
  leaseMs?: number;
  /** Model steps one turn may take (default 50). */
  maxSteps?: number;
  /** How long an interrupt waits for tools to honour their signal before settling (default 2000). */
  cancelGraceMs?: number;
  /** How often to look for sessions whose runtime died (default leaseMs / 2, at most 1 s). */
  recoveryIntervalMs?: number;
  log?: Logger;
  /** Spans of turns, steps, model and tool calls (`@opencomputer/telemetry`); off by default. */
  tracing?: Tracing;
  /**
   * How often `waitForTurn` reads the turn again whatever it heard: 250 ms by default, 5 s with
   * a shared signal (which wakes it at the settling commit of any process).
   */
  waitPollMs?: number;
  /** How long an idle session's lease is kept before it is given up (default 1000). */
  idleReleaseMs?: number;
  /** How long an approved `apply` may run before its outcome counts as unknown (default 60 000). */
  applyTimeoutMs?: number;
  /** Runtime-provided tools agents may select by id, e.g. the computers' `shell`. */
  builtInTools?: BuiltInTool[];
  /**
   * Built-in ids every render gets without useTool (default: `shell` when `builtInTools` has it,
   * as the platform gives every session its shell). A deployment may record its own
   * (`shell: false` in project.ts records none).
   */
  defaultTools?: string[];
  /**
   * How this process hears of commits made by others on the same store (new work, new events).
   * Default: the in-process Notifier, which only sees this process's own writes. Several
   * processes on PostgreSQL pass `createPostgresSignal` (LISTEN/NOTIFY). The caller closes it.
   */
  signal?: WorkSignal;
  /**
   * How long a process that did not queue a turn waits before trying to claim it, so the
   * process that queued it (and whose client waits there) normally runs it (default 100).
   */
  remoteClaimDelayMs?: number;
  /**
   * Where agent code runs: "in-process" (default), or an AgentExecution the caller made and
   * closes, e.g. worker processes (`createWorkerExecution` from @opencomputer/workers,
   * docs/workers.md).
   */
  execution?: ExecutionOption;
  /** The egress gateway URL and per-session token sent with every execution of agent code. */
  egress?: EgressSource;
  /**
   * Where memory documents and session bindings live (`createSqliteMemoryStore`,
   * `createPostgresMemoryStore`); without it, sessions that bind memory are refused.
   */
  memory?: MemoryStore;
  /** Time limits of HTTP memory providers' operations (docs/memory.md, "HTTP memory"). */
  httpMemory?: Partial<HttpMemorySettings>;
  /**
   * Budgets per label value (`opencomputer/budgets.json`), checked against `usage` (e.g.
   * `createSqliteUsageStore`) when a turn starts and after each step; see docs/usage.md.
   */
  labelBudgets?: LabelBudgetOptions;
  /** The MCP client for servers agents attach with useMcpServer (docs/mcp.md). */
  mcp?: McpOptions;
}

export interface McpOptions {
  /** E.g. `createMcpConnector()` from @opencomputer/mcp. */
  connector: McpConnector;
  /** How long one MCP tool call may take (default 120 000 ms). */
  callTimeoutMs?: number;
  /** How long connecting to a server and listing its tools may take (default 30 000 ms). */
  listTimeoutMs?: number;
}

/** Where agent code runs: in this process, or through an execution the caller owns. */
export type ExecutionOption = "in-process" | AgentExecution;

/** The execution to use, the resolver the engine loads through, and whether the runtime owns it. */
export interface ResolvedExecution {
  execution: AgentExecution;
  agents: AgentResolver;
  owned: boolean;
}

/** In this process by default (the runtime owns and closes it), else the caller's execution. */
export function resolveExecution(
  option: ExecutionOption | undefined,
  agents: AgentResolver,
): ResolvedExecution {
  if (option === undefined || option === "in-process") {
    return { execution: createInProcessExecution(agents), agents, owned: true };
  }
  // Agent code runs elsewhere: the engine must not import it, only locate it.
  return {
    execution: option,
    agents: option.kind === "worker" ? locatedAgents(agents) : agents,
    owned: false,
  };
}

const consoleLog: Logger = {
  error: (message, fields) => console.error(JSON.stringify({ level: "error", message, ...fields })),
  warn: (message, fields) => console.error(JSON.stringify({ level: "warn", message, ...fields })),
};

/** What every engine unit shares, from the options with their defaults filled in. */
export function createEngineContext(
  options: RuntimeOptions,
  running: ResolvedExecution,
): EngineContext {
  const processProbe = procProbe();
  return {
    store: options.store,
    agents: running.agents,
    execution: running.execution,
    ...(options.egress ? { egress: options.egress } : {}),
    ...(options.memory ? { memory: options.memory } : {}),
    httpMemory: { ...DEFAULT_HTTP_MEMORY, ...options.httpMemory },
    ...(options.labelBudgets ? { labelBudgets: options.labelBudgets } : {}),
    models: options.models,
    defaultModel: options.defaultModel ?? DEFAULT_MODEL,
    ...(options.mcp
      ? {
          mcp: {
            connector: options.mcp.connector,
            callTimeoutMs: options.mcp.callTimeoutMs ?? 120_000,
            listTimeoutMs: options.mcp.listTimeoutMs ?? 30_000,
          },
        }
      : {}),
    notifier: new Notifier(),
    log: options.log ?? consoleLog,
    tracing: options.tracing ?? NO_TRACING,
    runtimeId: options.runtimeId ?? defaultRuntimeId(processProbe),
    processProbe,
    leaseMs: options.leaseMs ?? 30_000,
    maxSteps: options.maxSteps ?? 50,
    cancelGraceMs: options.cancelGraceMs ?? 2000,
    builtInToolIds: [
      ASK_ID,
      ...MODEL_PROVIDED_TOOL_IDS,
      ...(options.builtInTools ?? []).map((t) => t.id),
    ],
    defaultTools: runtimeDefaultTools(options.defaultTools, options.builtInTools ?? []),
    builtInTools: new Map((options.builtInTools ?? []).map((t) => [t.id, t])),
    workerLosses: new WorkerLosses(),
    creations: new CreationMemo(),
    timers: new Deadlines<() => void>((run) => run(), { keepAlive: false }),
  };
}

/** A fresh id naming this process, so a runtime on the same machine can tell once it died. */
function defaultRuntimeId(probe: ProcessProbe): string {
  const self = probe.self();
  return self === null ? newId("rt") : withIncarnation(newId("rt"), self);
}
