// The schema as ordered, append-only migrations. `schema_migrations` records which versions
// are applied. Migrating runs in one transaction under a transaction-scoped advisory lock, so
// several processes starting at once on a fresh database queue up and all but the first find
// the work done (DDL is transactional in PostgreSQL: a failed migration leaves nothing behind).
import { StoreError } from "@opencomputer/runtime";
import type pg from "pg";

// JSON-valued columns are `json`, not `jsonb`: `json` keeps the exact text given (key order,
// number spelling) and accepts "\u0000", which `jsonb` refuses. A JSON null is the text `null`,
// never SQL NULL. Labels get a second, `jsonb` copy (see label-index.ts) for containment
// filters. Ids and ISO timestamps are `COLLATE "C"`: byte order, as the engine compares them,
// whatever the database's locale. `rid` is the insertion order.
import { APPROVALS_V2 } from "./approvals.ts";
import { DELIVERIES_V7 } from "./delivery-store.ts";
import { FLUSH_PROBE_V11 } from "./flush-probe.ts";
import { MEMORY_V4 } from "./memory-schema.ts";
import { TRIGGERS_V6 } from "./trigger-store.ts";
import { USAGE_V8 } from "./usage-store.ts";
import {
  FOLLOWED_SESSIONS_V9,
  UPDATE_FIRST_V12,
  WRITE_FUNCTION_V4,
  WRITE_PATH_V10,
} from "./write-function.ts";
import { WRITE_MANY_V13 } from "./write-many-function.ts";

const V1 = `
CREATE TABLE sessions (
  id text COLLATE "C" PRIMARY KEY,
  agent_id text COLLATE "C" NOT NULL,
  deployment_id text NOT NULL,
  environment text NOT NULL,
  status text NOT NULL,
  source text NOT NULL,
  labels json NOT NULL,
  label_index jsonb NOT NULL,
  execution_mode text NOT NULL,
  result json NOT NULL,
  question json NOT NULL,
  runtime json NOT NULL,
  revision bigint NOT NULL,
  last_seq bigint NOT NULL,
  idempotency_key text,
  lease_runtime_id text,
  lease_epoch bigint,
  lease_expires_at bigint,
  created_at text COLLATE "C" NOT NULL,
  updated_at text NOT NULL
);
CREATE UNIQUE INDEX sessions_idempotency_key ON sessions (idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX sessions_by_created ON sessions (created_at DESC, id DESC);
CREATE INDEX sessions_by_agent_created ON sessions (agent_id, created_at DESC, id DESC);
CREATE INDEX sessions_by_labels ON sessions USING gin (label_index jsonb_path_ops);

CREATE TABLE turns (
  rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
  id text COLLATE "C" NOT NULL,
  input json NOT NULL,
  mode text NOT NULL,
  status text NOT NULL,
  outcome text,
  error json NOT NULL,
  idempotency_key text,
  steps integer NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  started_at text,
  settled_at text,
  UNIQUE (session_id, id)
);
CREATE UNIQUE INDEX turns_idempotency_key ON turns (session_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX turns_active ON turns (session_id) WHERE status IN ('queued', 'running');

CREATE TABLE messages (
  rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
  id text COLLATE "C" NOT NULL,
  turn_id text NOT NULL,
  role text NOT NULL,
  content json NOT NULL,
  created_at text NOT NULL,
  UNIQUE (session_id, id)
);

CREATE TABLE tool_calls (
  rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
  call_id text COLLATE "C" NOT NULL,
  turn_id text NOT NULL,
  message_id text NOT NULL,
  tool text NOT NULL,
  input json NOT NULL,
  status text NOT NULL,
  output json NOT NULL,
  error text,
  attempts integer NOT NULL,
  started_at text NOT NULL,
  settled_at text,
  UNIQUE (session_id, call_id)
);

CREATE TABLE results (
  rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
  result_id text COLLATE "C" NOT NULL,
  agent_id text NOT NULL,
  deployment_id text NOT NULL,
  turn_id text NOT NULL,
  message_id text NOT NULL,
  tool_call_id text COLLATE "C" NOT NULL,
  result_tool text NOT NULL,
  schema_digest text NOT NULL,
  data_digest text NOT NULL,
  data json NOT NULL,
  created_at text NOT NULL,
  UNIQUE (session_id, result_id),
  UNIQUE (session_id, tool_call_id)
);

CREATE TABLE events (
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
  seq bigint NOT NULL,
  id text NOT NULL,
  timestamp text NOT NULL,
  turn_id text,
  type text NOT NULL,
  data json NOT NULL,
  PRIMARY KEY (session_id, seq)
);
`;

// Sessions belong to a project (an API key sees only its own). Idempotency keys become unique
// per project, so one project's key can never replay another project's session.
const PROJECTS_V3 = `
ALTER TABLE sessions ADD COLUMN project_id text COLLATE "C" NOT NULL DEFAULT 'default';
DROP INDEX sessions_idempotency_key;
CREATE UNIQUE INDEX sessions_idempotency_key ON sessions (project_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX sessions_by_project_created ON sessions (project_id, created_at DESC, id DESC);
`;

/** What a schema name may be: it is written unquoted into statements. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

/** Migration n (1-based) brings the schema from version n-1 to n. Append only. */
// Memory's tables are migration 4 and the write function 5 (both were written as "4" on
// parallel branches; the order is fixed from here on). The trigger tables are 6.
export const MIGRATIONS: readonly string[] = [
  V1,
  APPROVALS_V2,
  PROJECTS_V3,
  MEMORY_V4,
  WRITE_FUNCTION_V4,
  TRIGGERS_V6,
  DELIVERIES_V7,
  USAGE_V8,
  FOLLOWED_SESSIONS_V9,
  WRITE_PATH_V10,
  FLUSH_PROBE_V11,
  UPDATE_FIRST_V12,
  WRITE_MANY_V13,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

// Any constant pair works; it only has to be the same in every process using the store.
const LOCK_NAMESPACE = "opencomputer.store-postgres";

/**
 * Brings `schema` (created when missing; the connection's search_path must point at it) or,
 * without one, the default schema up to SCHEMA_VERSION.
 */
export async function migrate(client: pg.ClientBase, schema: string | undefined): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [
      LOCK_NAMESPACE,
      schema ?? "",
    ]);
    // Only under the lock: concurrent CREATE ... IF NOT EXISTS can still race on the catalog.
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM schema_migrations",
    );
    const version = rows[0]?.version ?? 0;
    if (version > SCHEMA_VERSION) {
      throw new StoreError(
        "schema_unsupported",
        `The database has schema version ${version}, newer than this build supports ` +
          `(${SCHEMA_VERSION}); upgrade @opencomputer/store-postgres.`,
      );
    }
    for (let v = version; v < SCHEMA_VERSION; v++) {
      await client.query(MIGRATIONS[v]!);
      await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [v + 1]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
