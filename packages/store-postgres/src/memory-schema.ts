// Memory documents, resources and session bindings (the MemoryStore port). Documents are keyed
// by project, environment, resource and id; a deleted document keeps its row so its id stays
// reserved. `revision` counts every change. Text columns are `COLLATE "C"` where they are
// ordered, so list order is byte order as on SQLite.
export const MEMORY_V4 = `
CREATE TABLE memory_resources (
  project_id text COLLATE "C" NOT NULL,
  environment text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  kind text NOT NULL,
  max_bytes integer NOT NULL,
  declared boolean NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  PRIMARY KEY (project_id, environment, id)
);

CREATE TABLE memory_documents (
  project_id text COLLATE "C" NOT NULL,
  environment text COLLATE "C" NOT NULL,
  resource text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  title text NOT NULL,
  text text NOT NULL,
  summary text NOT NULL,
  agent_writes text NOT NULL,
  revision bigint NOT NULL,
  bytes integer NOT NULL,
  writer json NOT NULL,
  deleted boolean NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (project_id, environment, resource, id)
);
CREATE INDEX memory_documents_by_update
  ON memory_documents (project_id, environment, resource, deleted, updated_at DESC, id);

CREATE TABLE memory_bindings (
  session_id text COLLATE "C" NOT NULL,
  position integer NOT NULL,
  project_id text NOT NULL,
  environment text NOT NULL,
  resource text NOT NULL,
  scope text NOT NULL,
  doc_id text,
  access text NOT NULL,
  revoked_at text,
  PRIMARY KEY (session_id, position)
);
`;
