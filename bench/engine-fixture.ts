// A runtime on a fresh temp-file SQLite database (WAL) running the support example on its
// scripted model: what the engine benchmarks drive.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import {
  createRuntime,
  createSourceAgents,
  type Runtime,
  type RuntimeOptions,
  type Store,
  type TurnRecord,
} from "@opencomputer/runtime";
import {
  createSqliteStore,
  type SqliteStore,
  type SqliteStoreOptions,
} from "@opencomputer/store-sqlite";
import { createWorkerExecution } from "@opencomputer/workers";
import { AGENT_ID, SCRIPT_MODEL, SUPPORT_DIR, USER_TEXT } from "./scenario.ts";

export type Durability = "normal" | "full";

export type PhaseSink = (createNs: number, sendTurnNs: number, waitForTurnNs: number) => void;

export interface EngineFixture {
  runtime: Runtime;
  store: SqliteStore;
  dbPath: string;
  /** One session, one turn, to settlement; `phases` is told how long each call took (ns). */
  runOnce(phases?: PhaseSink): Promise<{ sessionId: string; turn: TurnRecord }>;
  close(): Promise<void>;
}

/** A runtime's options in a benchmark: "worker" asks for worker processes, made here. */
export type EngineOptions = Omit<Partial<RuntimeOptions>, "execution"> & {
  execution?: "in-process" | "worker";
};

/** A runtime on `store` running the support example on its scripted model (not started). */
export function supportRuntime(store: Store, extra: Partial<RuntimeOptions> = {}): Runtime {
  return createRuntime({
    store,
    agents: extra.agents ?? createSourceAgents(SUPPORT_DIR),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: SCRIPT_MODEL,
    }),
    ...extra,
  });
}

export async function openEngine(
  durability: Durability,
  /** E.g. `{ execution: "worker" }` for the engine-worker benchmark. */
  { execution, ...extra }: EngineOptions = {},
  /** E.g. `{ groupCommitMs: 0 }` for the engine-per-commit benchmark. */
  storeOptions: Partial<SqliteStoreOptions> = {},
): Promise<EngineFixture> {
  const dir = mkdtempSync(join(tmpdir(), "oc-bench-"));
  const dbPath = join(dir, "data.db");
  const store = createSqliteStore({ path: dbPath, durability, ...storeOptions });
  const agents = createSourceAgents(SUPPORT_DIR);
  const workers = execution === "worker" ? createWorkerExecution({ agents }) : undefined;
  const runtime = supportRuntime(store, {
    ...extra,
    agents,
    ...(workers ? { execution: workers } : {}),
  });
  await runtime.start();

  async function runOnce(phases?: PhaseSink) {
    const t0 = process.hrtime.bigint();
    const { session } = await runtime.sessions.create({ agentId: AGENT_ID });
    const t1 = process.hrtime.bigint();
    const sent = await runtime.sessions.sendTurn(session.id, { text: USER_TEXT });
    const t2 = process.hrtime.bigint();
    const turn = await runtime.sessions.waitForTurn(session.id, sent.turnId);
    phases?.(Number(t1 - t0), Number(t2 - t1), Number(process.hrtime.bigint() - t2));
    if (turn.status !== "completed") {
      throw new Error(`turn ${turn.id} ended ${turn.status}: ${JSON.stringify(turn.error)}`);
    }
    return { sessionId: session.id, turn };
  }

  return {
    runtime,
    store,
    dbPath,
    runOnce,
    async close() {
      await runtime.close();
      await workers?.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
