// `--store <url>`: opens the store a server runs on and the signal its runtime dispatches with.
// A path is the embedded SQLite store (one process; the in-process signal). `postgres://…` is
// the PostgreSQL store plus a LISTEN/NOTIFY signal, so several `opencomputer server` processes
// on one database share the work: a turn queued through any of them is claimed by exactly one
// runtime (the lease decides), and SSE followers on any of them see every event.
import { OpenComputerError } from "@opencomputer/agent";
import type {
  DeliveryStore,
  RuntimeOptions,
  Store,
  TriggerStore,
  UsageStore,
  WorkSignal,
} from "@opencomputer/runtime";
import {
  createPostgresDeliveryStore,
  createPostgresMemoryStore,
  createPostgresSignal,
  createPostgresStore,
  createPostgresTriggerStore,
  createPostgresUsageStore,
  type PostgresStore,
} from "@opencomputer/store-postgres";
import {
  createSqliteDeliveryStore,
  createSqliteMemoryStore,
  createSqliteStore,
  createSqliteTriggerStore,
  createSqliteUsageStore,
} from "@opencomputer/store-sqlite";

export interface OpenedStore {
  store: Store;
  /** Schedule runs and webhooks, on the same database. */
  triggers: TriggerStore;
  /** Event subscriptions and their deliveries, on the same database. */
  deliveries: DeliveryStore;
  /** The usage roll-up (`GET /usage`, `opencomputer usage`), on the same database. */
  usage: UsageStore;
  /** Only for PostgreSQL; the runtime defaults to its in-process signal otherwise. */
  signal?: WorkSignal;
  /** Spread into createRuntime: the signal and the lease timings from the environment. */
  runtimeOptions: Pick<
    RuntimeOptions,
    | "signal"
    | "leaseMs"
    | "recoveryIntervalMs"
    | "idleReleaseMs"
    | "applyTimeoutMs"
    | "runtimeId"
    | "memory"
  >;
  /** One line for the server's start-up output: which store, and on PostgreSQL its pipeline. */
  description: string;
  /** Stops the signal, then closes the store (after the runtime has closed). */
  close(): Promise<void>;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/**
 * Lease timings, for operators and for tests that kill processes and wait for a takeover:
 * OPENCOMPUTER_LEASE_MS (30 000), OPENCOMPUTER_RECOVERY_INTERVAL_MS (lease / 2, at most 1 s),
 * OPENCOMPUTER_IDLE_RELEASE_MS (1 000), OPENCOMPUTER_APPLY_TIMEOUT_MS (60 000: how long an
 * approved apply may run before its outcome counts as unknown). OPENCOMPUTER_RUNTIME_ID names
 * the runtime in leases and logs (default: a fresh id per process).
 */
export function runtimeEnv(
  env: NodeJS.ProcessEnv,
): Pick<
  RuntimeOptions,
  "leaseMs" | "recoveryIntervalMs" | "idleReleaseMs" | "applyTimeoutMs" | "runtimeId"
> {
  const out: ReturnType<typeof runtimeEnv> = {};
  const ms = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === "") return undefined;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 10 || value > 86_400_000) {
      throw new OpenComputerError(
        "usage",
        `${name} must be a whole number of milliseconds from 10 to 86400000; got "${raw}"`,
        { path: name },
      );
    }
    return value;
  };
  const leaseMs = ms("OPENCOMPUTER_LEASE_MS");
  const recoveryIntervalMs = ms("OPENCOMPUTER_RECOVERY_INTERVAL_MS");
  const idleReleaseMs = ms("OPENCOMPUTER_IDLE_RELEASE_MS");
  if (leaseMs !== undefined) out.leaseMs = leaseMs;
  if (recoveryIntervalMs !== undefined) out.recoveryIntervalMs = recoveryIntervalMs;
  if (idleReleaseMs !== undefined) out.idleReleaseMs = idleReleaseMs;
  const applyTimeoutMs = ms("OPENCOMPUTER_APPLY_TIMEOUT_MS");
  if (applyTimeoutMs !== undefined) out.applyTimeoutMs = applyTimeoutMs;
  const runtimeId = env.OPENCOMPUTER_RUNTIME_ID;
  if (runtimeId !== undefined && runtimeId !== "") {
    if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(runtimeId)) {
      throw new OpenComputerError(
        "usage",
        "OPENCOMPUTER_RUNTIME_ID must be 1-128 letters, digits, '_', '.', ':' or '-'",
        { path: "OPENCOMPUTER_RUNTIME_ID" },
      );
    }
    out.runtimeId = runtimeId;
  }
  return out;
}

/**
 * The PostgreSQL store's pipeline, when an operator sizes it: OPENCOMPUTER_PG_CONNECTIONS
 * (1-64) and OPENCOMPUTER_PG_FILL (1-1024, statements in flight on a connection before the
 * next is used). Unset, each follows the server's commit settings (docs/scale-out.md).
 */
export function pipelineEnv(env: NodeJS.ProcessEnv): { connections?: number; fill?: number } {
  const out: { connections?: number; fill?: number } = {};
  for (const [key, name, max] of [
    ["connections", "OPENCOMPUTER_PG_CONNECTIONS", 64],
    ["fill", "OPENCOMPUTER_PG_FILL", 1024],
  ] as const) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < 1 || value > max) {
      throw new OpenComputerError(
        "usage",
        `${name} must be a whole number from 1 to ${max}; got "${raw}"`,
        {
          path: name,
        },
      );
    }
    out[key] = value;
  }
  return out;
}

/** Opens `url` (a SQLite path or `postgres://…`) with what its runtime needs. */
export async function openStore(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<OpenedStore> {
  const timings = runtimeEnv(env);
  if (!POSTGRES_URL.test(url)) {
    const store = createSqliteStore({ path: url });
    const memory = createSqliteMemoryStore(store);
    return {
      store,
      triggers: createSqliteTriggerStore(store),
      deliveries: createSqliteDeliveryStore(store),
      usage: createSqliteUsageStore(store),
      runtimeOptions: { ...timings, memory },
      description: `SQLite (${url})`,
      close: () => store.close(),
    };
  }
  const store = await createPostgresStore({ connectionString: url, pipeline: pipelineEnv(env) });
  let signal: WorkSignal & { close(): Promise<void> };
  try {
    signal = await createPostgresSignal({
      connectionString: url,
      onError: (error) =>
        process.stderr.write(`warning: LISTEN connection lost, reconnecting: ${error.message}\n`),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    store,
    triggers: createPostgresTriggerStore(store),
    deliveries: createPostgresDeliveryStore(store),
    usage: createPostgresUsageStore(store),
    signal,
    runtimeOptions: { ...timings, signal, memory: createPostgresMemoryStore(store) },
    description: postgresDescription(store.pipelineShape),
    async close() {
      await signal.close();
      await store.close();
    },
  };
}

/**
 * The pipeline's shape as chosen (docs/scale-out.md, "Pipelined connections"), so an operator
 * sees what the timed commit flush decided and what OPENCOMPUTER_PG_CONNECTIONS and
 * OPENCOMPUTER_PG_FILL would change.
 */
export function postgresDescription(shape: PostgresStore["pipelineShape"]): string {
  if (shape === null) return "PostgreSQL, statements through the pool";
  const { connections, fill, flushMs } = shape;
  const why =
    flushMs === null
      ? "as configured"
      : flushMs === 0
        ? "commits do not wait for a disk flush"
        : `a commit's flush took ${flushMs.toFixed(2)} ms`;
  return `PostgreSQL, pipelined on up to ${connections} connections filled to ${fill} (${why})`;
}
