import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ObservedEgress } from "@opencomputer/connections";
import { createMcpConnector } from "@opencomputer/mcp";
import { createModelResolver, createScriptModel, defaultProviders } from "@opencomputer/models";
import type { AgentResolver, ExecutionOption, Runtime, Store } from "@opencomputer/runtime";
import { createRuntime } from "@opencomputer/runtime";
import {
  createSqliteMemoryStore,
  createSqliteStore,
  createSqliteUsageStore,
} from "@opencomputer/store-sqlite";
import { createOtlpTracing } from "@opencomputer/telemetry";
import { projectLabelBudgets } from "./budgets.ts";
import { projectComputers } from "./computers.ts";
import { projectEgress } from "./egress.ts";
import { projectPricer } from "./prices.ts";

export interface EmbeddedRuntime {
  projectDir: string;
  runtime: Runtime;
  close(): Promise<void>;
}

/** What `opencomputer test` changes: its own store, the scenario's model, and (crash mode) hooks. */
export interface EmbeddedOptions {
  /** Another SQLite file than `.opencomputer/data.db`. */
  dbPath?: string;
  /** The model every call uses (as OPENCOMPUTER_MODEL), whatever the agent selects. */
  model?: string;
  /** Wraps the store the runtime writes through (crash mode's kill points). */
  wrapStore?: (store: Store) => Store;
  /** Sees every outbound request at the egress gateway (crash mode). */
  observeEgress?: (request: ObservedEgress) => void;
  /** Shorter leases, so a fresh runtime takes a killed one's session over quickly. */
  timing?: { leaseMs: number; recoveryIntervalMs: number };
  /** Where agent code runs (default: this process); `close` runs after the runtime's. */
  execution?: (agents: AgentResolver) => { execution: ExecutionOption; close(): Promise<void> };
}

/** The runtime on the embedded default: SQLite at `<dir>/.opencomputer/data.db`. */
export function openEmbedded(
  dir: string,
  agents: (projectDir: string) => AgentResolver,
  options: EmbeddedOptions = {},
): EmbeddedRuntime {
  const projectDir = resolve(dir);
  const dataDir = join(projectDir, ".opencomputer");
  mkdirSync(dataDir, { recursive: true });
  const sqlite = createSqliteStore({ path: options.dbPath ?? join(dataDir, "data.db") });
  const store = options.wrapStore ? options.wrapStore(sqlite) : sqlite;
  const resolver = agents(projectDir);
  const execution = options.execution?.(resolver);
  const computers = projectComputers(projectDir, (sessionId, change) => {
    void runtime.sessions
      .recordComputer(sessionId, change)
      .catch((error: unknown) =>
        process.stderr.write(`warning: computer state not recorded: ${String(error)}\n`),
      );
  });
  // One-shot sessions run on development: loopback origins and `.env.local` secrets allowed.
  const egress = projectEgress({
    projectDir,
    devMode: true,
    store,
    runtime: () => runtime,
    ...(options.observeEgress ? { observe: options.observeEgress } : {}),
  });
  // Spans over OTLP when the standard OTEL_* variables ask for them (docs/telemetry.md).
  const tracing = createOtlpTracing();
  const runtime = createRuntime({
    ...(tracing ? { tracing } : {}),
    egress: egress.source,
    store,
    memory: createSqliteMemoryStore(sqlite),
    ...projectLabelBudgets(projectDir, createSqliteUsageStore(sqlite)),
    ...options.timing,
    builtInTools: computers.tools,
    agents: resolver,
    ...(execution ? { execution: execution.execution } : {}),
    mcp: { connector: createMcpConnector({ allowLoopbackHttp: true }) },
    // Real providers read their keys from the environment when a model is first used.
    models: createModelResolver({
      providers: { ...defaultProviders(), script: createScriptModel },
      pricer: projectPricer(projectDir),
      ...(options.model ? { override: options.model } : {}),
    }),
  });
  return {
    projectDir,
    runtime,
    async close() {
      await runtime.close();
      await execution?.close();
      await tracing?.close();
      await egress.close();
      await computers.close();
      await sqlite.close();
    },
  };
}
