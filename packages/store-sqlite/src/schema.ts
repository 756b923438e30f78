// The schema, as an ordered list of migrations. `PRAGMA user_version` records how many have
// been applied; each open applies the missing ones inside BEGIN IMMEDIATE, so two processes
// opening the same new file at once serialise on the write lock and the second finds the
// work done.

import { StoreError } from "@opencomputer/runtime";
import type Database from "better-sqlite3";
import { APPROVALS_V2 } from "./approval-rows.ts";
import { DELIVERIES_V7 } from "./delivery-store.ts";
import { MEMORY_V5 } from "./memory-schema.ts";
import { TRIGGERS_V6 } from "./trigger-store.ts";
import { USAGE_V8 } from "./usage-store.ts";

// JSON-valued columns hold JSON text (never SQL NULL: a JSON null is the text `null`), so a
// value comes back exactly as it went in. Ids are unique within their session.
const V1 = `
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  deployment_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT NOT NULL,
  source TEXT NOT NULL,
  labels TEXT NOT NULL,
  execution_mode TEXT NOT NULL,
  result TEXT NOT NULL,
  question TEXT NOT NULL,
  runtime TEXT NOT NULL,
  revision INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  idempotency_key TEXT,
  lease_runtime_id TEXT,
  lease_epoch INTEGER,
  lease_expires_at INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX sessions_idempotency_key ON sessions (idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX sessions_by_created ON sessions (created_at DESC, id DESC);
CREATE INDEX sessions_by_agent_created ON sessions (agent_id, created_at DESC, id DESC);

-- Lookups by session use the UNIQUE (session_id, ...) indexes; no separate index per table,
-- since every index is pages written on each commit.
CREATE TABLE turns (
  rid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id),
  id TEXT NOT NULL,
  input TEXT NOT NULL,
  mode TEXT NOT NULL,
  status TEXT NOT NULL,
  outcome TEXT,
  error TEXT NOT NULL,
  idempotency_key TEXT,
  steps INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  started_at TEXT,
  settled_at TEXT,
  UNIQUE (session_id, id)
);
CREATE UNIQUE INDEX turns_idempotency_key ON turns (session_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX turns_active ON turns (session_id) WHERE status IN ('queued', 'running');

CREATE TABLE messages (
  rid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id),
  id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (session_id, id)
);

CREATE TABLE tool_calls (
  rid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id),
  call_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  input TEXT NOT NULL,
  status TEXT NOT NULL,
  output TEXT NOT NULL,
  error TEXT,
  attempts INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  settled_at TEXT,
  UNIQUE (session_id, call_id)
);

CREATE TABLE results (
  rid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id),
  result_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  deployment_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  result_tool TEXT NOT NULL,
  schema_digest TEXT NOT NULL,
  data_digest TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (session_id, result_id),
  UNIQUE (session_id, tool_call_id)
);

CREATE TABLE events (
  session_id TEXT NOT NULL REFERENCES sessions (id),
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  turn_id TEXT,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
`;

// Sessions belong to a project (an API key sees only its own). Idempotency keys become unique
// per project, so one project's key can never replay another project's session.
const PROJECTS_V3 = `
ALTER TABLE sessions ADD COLUMN project_id TEXT NOT NULL DEFAULT 'default';
DROP INDEX sessions_idempotency_key;
CREATE UNIQUE INDEX sessions_idempotency_key ON sessions (project_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX sessions_by_project_created ON sessions (project_id, created_at DESC, id DESC);
`;

// Group commit (group-commit.ts): the last commit-journal record this file's state includes,
// written in the same commit as the changes, so a replay starts after it.
// `file_id` is stamped on every journal record, so a journal left next to another database file
// (the old one deleted, a backup restored) is never replayed into this one.
const JOURNAL_V4 = `
CREATE TABLE journal_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  applied_seq INTEGER NOT NULL,
  file_id TEXT NOT NULL
);
INSERT INTO journal_state (id, applied_seq, file_id) VALUES (1, 0, lower(hex(randomblob(8))));
`;

/** Migration n (1-based) brings a database from user_version n-1 to n. Append only. */
export const MIGRATIONS: readonly string[] = [
  V1,
  APPROVALS_V2,
  PROJECTS_V3,
  JOURNAL_V4,
  MEMORY_V5,
  TRIGGERS_V6,
  DELIVERIES_V7,
  USAGE_V8,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function migrate(db: Database.Database): void {
  const run = db.transaction(() => {
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new StoreError(
        "schema_unsupported",
        `The database ${db.name} has schema version ${version}, newer than this build supports ` +
          `(${SCHEMA_VERSION}); upgrade @opencomputer/store-sqlite.`,
      );
    }
    for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  run.immediate();
}
