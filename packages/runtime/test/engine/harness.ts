import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { AgentFunction, Memory } from "@opencomputer/agent";
import {
  createModelResolver,
  createScriptModel,
  type Pricer,
  type ScriptStep,
} from "@opencomputer/models";
import {
  createRuntime,
  createStaticAgents,
  type EventRecord,
  type LabelBudgetOptions,
  type Logger,
  type RuntimeOptions,
  type Store,
} from "@opencomputer/runtime";
import {
  createSqliteMemoryStore,
  createSqliteStore,
  createSqliteUsageStore,
} from "@opencomputer/store-sqlite";
import { createWorkerExecution, type WorkerPoolOptions } from "@opencomputer/workers";
import { protocolChecked } from "../protocol-check.ts";

export interface Harness {
  dir: string;
  store: ReturnType<typeof createSqliteStore>;
  runtime: ReturnType<typeof createRuntime>;
  logs: Array<{ level: string; message: string; fields?: Record<string, unknown> }>;
  /** Starts a session of `agent` and runs one turn to its end. */
  run(
    text: string,
    agentId?: string,
  ): Promise<{ sessionId: string; turnId: string; events: EventRecord[] }>;
  events(sessionId: string): Promise<EventRecord[]>;
  script(name: string, steps: ScriptStep[]): void;
  newRuntime(options?: HarnessRuntimeOptions): ReturnType<typeof createRuntime>;
  close(): Promise<void>;
}

/** Where agent code runs in a harness: both must pass the same engine tests. */
export type HarnessExecution = "in-process" | "worker";
export const EXECUTIONS: readonly HarnessExecution[] = ["in-process", "worker"];

/** A runtime's options in a harness: where agent code runs is named, the harness builds it. */
export interface HarnessRuntimeOptions extends Partial<Omit<RuntimeOptions, "execution">> {
  execution?: HarnessExecution;
  /** The worker processes' settings when `execution` is "worker". */
  workers?: WorkerPoolOptions;
}

export interface HarnessOptions
  extends Partial<
    Omit<RuntimeOptions, "store" | "agents" | "models" | "execution" | "labelBudgets">
  > {
  /** Budgets per label value, checked against the harness's store (createSqliteUsageStore). */
  labelBudgets?: Omit<LabelBudgetOptions, "usage">;
  /** The worker processes' settings when `execution` is "worker". */
  workers?: WorkerPoolOptions;
  /** Agents as functions of the test file: they can only run in-process. */
  agents?: Record<string, AgentFunction>;
  /**
   * A module exporting each agent function under its id. Agents given this way run in either
   * execution mode (a worker imports the module itself).
   */
  agentsModule?: string;
  /** Where agent code runs (default in-process; `worker` needs `agentsModule`). */
  execution?: HarnessExecution;
  /** Steps of the default script (`script/test`), used as every agent's model. */
  steps?: ScriptStep[];
  /** Extra model providers (e.g. a hand-written model for one test). */
  providers?: Record<string, (name: string) => LanguageModelV3>;
  model?: string;
  /** Prices model steps (default: the shipped table, which has no `script/*` models). */
  pricer?: Pricer;
  /** Wraps the store the runtimes use (the harness keeps the real one), e.g. to inject faults. */
  wrapStore?: (store: Store) => Store;
  /** The memory resources each agent declares; the runtimes get a memory store on the file. */
  agentMemory?: Record<string, readonly Memory[]>;
}

/** A runtime on a real SQLite file in a temp dir, agents given as functions, a scripted model. */
export async function harness(options: HarnessOptions): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "oc-engine-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  const store = createSqliteStore({ path: join(dir, "data.db") });
  const checked = protocolChecked(store);
  const logs: Harness["logs"] = [];
  const log: Logger = {
    error: (message, fields) =>
      logs.push({ level: "error", message, ...(fields ? { fields } : {}) }),
    warn: (message, fields) => logs.push({ level: "warn", message, ...(fields ? { fields } : {}) }),
  };
  const script = (name: string, steps: ScriptStep[]) =>
    writeFileSync(join(dir, "opencomputer", "scripts", `${name}.json`), JSON.stringify({ steps }));
  script("test", options.steps ?? []);
  const runtimes: Array<ReturnType<typeof createRuntime>> = [];
  const agents = options.agents ?? (await agentsOf(options.agentsModule));
  const modules = options.agentsModule
    ? Object.fromEntries(Object.keys(agents).map((id) => [id, options.agentsModule!]))
    : undefined;
  if (options.execution === "worker" && !modules) {
    throw new Error("harness: execution worker needs agentsModule (functions cannot cross)");
  }
  const newRuntime = (extraOptions: HarnessRuntimeOptions = {}) => {
    const {
      agents: _a,
      agentsModule: _m,
      execution,
      workers,
      steps: _s,
      providers,
      model,
      pricer,
      labelBudgets,
      wrapStore,
      agentMemory,
      ...rest
    } = options;
    const { execution: extraExecution, workers: extraWorkers, ...extra } = extraOptions;
    const resolver = createStaticAgents({
      projectDir: dir,
      agents,
      ...(modules ? { modules } : {}),
      ...(agentMemory ? { memory: agentMemory } : {}),
    });
    // Worker processes are the caller's to make and close (the runtime only uses them).
    const workerExecution =
      (extraExecution ?? execution) === "worker"
        ? createWorkerExecution({
            ...("workers" in extraOptions ? extraWorkers : workers),
            agents: resolver,
            log: extra.log ?? rest.log ?? log,
          })
        : undefined;
    const rt = createRuntime({
      store: wrapStore ? wrapStore(checked.store) : checked.store,
      agents: resolver,
      execution: workerExecution ?? "in-process",
      models: createModelResolver({
        providers: { script: createScriptModel, ...providers },
        override: model ?? "script/test",
        ...(pricer ? { pricer } : {}),
      }),
      ...(labelBudgets
        ? { labelBudgets: { ...labelBudgets, usage: createSqliteUsageStore(store) } }
        : {}),
      log,
      cancelGraceMs: 200,
      ...(agentMemory ? { memory: createSqliteMemoryStore(store) } : {}),
      ...rest,
      ...extra,
    });
    if (workerExecution) {
      const close = rt.close;
      rt.close = async () => {
        await close();
        await workerExecution.close();
      };
    }
    runtimes.push(rt);
    return rt;
  };
  const runtime = newRuntime();
  await runtime.start();
  const events = async (sessionId: string) => {
    const all: EventRecord[] = [];
    for (;;) {
      const page = await store.readEvents(
        sessionId,
        all.length ? all[all.length - 1]!.seq : 0,
        500,
      );
      all.push(...page);
      if (page.length < 500) return all;
    }
  };
  return {
    dir,
    store,
    runtime,
    logs,
    script,
    newRuntime,
    events,
    async run(text, agentId = Object.keys(agents)[0]!) {
      const { session } = await runtime.sessions.create({ agentId });
      const { turnId } = await runtime.sessions.sendTurn(session.id, { text });
      await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
      return { sessionId: session.id, turnId, events: await events(session.id) };
    },
    async close() {
      for (const rt of runtimes) await rt.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      if (checked.problems.length > 0) {
        throw new Error(
          `Events that do not match @opencomputer/protocol:\n${checked.problems.join("\n")}`,
        );
      }
    },
  };
}

/** The agent functions a module exports (tools are objects, agents functions). */
async function agentsOf(file: string | undefined): Promise<Record<string, AgentFunction>> {
  if (!file) throw new Error("harness: give agents or agentsModule");
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(mod).filter((entry): entry is [string, AgentFunction] => {
      return typeof entry[1] === "function";
    }),
  );
}

/** Worker timings short enough for tests that kill or hang a worker. */
export const TEST_WORKERS: WorkerPoolOptions = {
  timings: { heartbeatMs: 50, heartbeatTimeoutMs: 2000, renderDeadlineMs: 5000 },
};

export function types(events: EventRecord[]): string[] {
  return events.map((e) => e.type);
}

export function ofType(
  events: EventRecord[],
  type: string,
): Array<EventRecord & { data: Record<string, unknown> }> {
  return events.filter((e) => e.type === type) as Array<
    EventRecord & { data: Record<string, unknown> }
  >;
}

/** Resolves when `predicate` holds, polling; fails the test after `timeoutMs`. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * A `wrapStore` that counts the calls of the named store methods into `counts`, so a test can
 * say how many reads or writes a call made.
 */
export function countingCalls(methods: readonly string[], counts: Record<string, number>) {
  return (store: Store): Store =>
    new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof key !== "string" || !methods.includes(key)) return value;
        return (...args: unknown[]) => {
          counts[key] = (counts[key] ?? 0) + 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
}
