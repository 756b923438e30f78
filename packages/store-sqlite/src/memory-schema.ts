// Memory documents, resources and session bindings (the MemoryStore port, memory-store.ts).
// Documents are keyed by project, environment, resource and id; a deleted document keeps its
// row (deleted = 1) so its id stays reserved. `revision` counts every change.
export const MEMORY_V5 = `
CREATE TABLE memory_resources (
  project_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  id TEXT NOT NULL,
  kind TEXT NOT NULL,
  max_bytes INTEGER NOT NULL,
  declared INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project_id, environment, id)
) WITHOUT ROWID;

CREATE TABLE memory_documents (
  project_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  resource TEXT NOT NULL,
  id TEXT NOT NULL,
  title TEXT NOT NULL,
  text TEXT NOT NULL,
  summary TEXT NOT NULL,
  agent_writes TEXT NOT NULL,
  revision INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  writer TEXT NOT NULL,
  deleted INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project_id, environment, resource, id)
) WITHOUT ROWID;
CREATE INDEX memory_documents_by_update
  ON memory_documents (project_id, environment, resource, deleted, updated_at DESC, id);

CREATE TABLE memory_bindings (
  session_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  project_id TEXT NOT NULL,
  environment TEXT NOT NULL,
  resource TEXT NOT NULL,
  scope TEXT NOT NULL,
  doc_id TEXT,
  access TEXT NOT NULL,
  revoked_at TEXT,
  PRIMARY KEY (session_id, position)
) WITHOUT ROWID;
`;
