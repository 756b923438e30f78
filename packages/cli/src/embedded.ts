import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { createMcpConnector } from "@opencomputer/mcp";
import { createModelResolver, createScriptModel, defaultProviders } from "@opencomputer/models";
import type { AgentResolver, Runtime } from "@opencomputer/runtime";
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

/** The runtime on the embedded default: SQLite at `<dir>/.opencomputer/data.db`. */
export function openEmbedded(
  dir: string,
  agents: (projectDir: string) => AgentResolver,
): EmbeddedRuntime {
  const projectDir = resolve(dir);
  const dataDir = join(projectDir, ".opencomputer");
  mkdirSync(dataDir, { recursive: true });
  const store = createSqliteStore({ path: join(dataDir, "data.db") });
  const computers = projectComputers(projectDir, (sessionId, change) => {
    void runtime.sessions
      .recordComputer(sessionId, change)
      .catch((error: unknown) =>
        process.stderr.write(`warning: computer state not recorded: ${String(error)}\n`),
      );
  });
  // One-shot sessions run on development: loopback origins and `.env.local` secrets allowed.
  const egress = projectEgress({ projectDir, devMode: true, store, runtime: () => runtime });
  // Spans over OTLP when the standard OTEL_* variables ask for them (docs/telemetry.md).
  const tracing = createOtlpTracing();
  const runtime = createRuntime({
    ...(tracing ? { tracing } : {}),
    egress: egress.source,
    store,
    memory: createSqliteMemoryStore(store),
    ...projectLabelBudgets(projectDir, createSqliteUsageStore(store)),
    builtInTools: computers.tools,
    agents: agents(projectDir),
    mcp: { connector: createMcpConnector({ allowLoopbackHttp: true }) },
    // Real providers read their keys from the environment when a model is first used.
    models: createModelResolver({
      providers: { ...defaultProviders(), script: createScriptModel },
      pricer: projectPricer(projectDir),
    }),
  });
  return {
    projectDir,
    runtime,
    async close() {
      await runtime.close();
      await tracing?.close();
      await egress.close();
      await computers.close();
      await store.close();
    },
  };
}
