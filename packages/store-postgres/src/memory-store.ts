// The MemoryStore port on the PostgresStore's pool and database. Each write is one transaction
// that locks what it checks (the document row FOR UPDATE, the resource row for a count), so two
// runtimes saving one document from the same revision serialise and exactly one commits.

import {
  type AgentSaveOutcome,
  isoNow,
  type MemoryBindingRecord,
  type MemoryDocumentRecord,
  MemoryError,
  type MemoryKey,
  type MemoryPage,
  type MemoryPatch,
  type MemoryProviderConfig,
  type MemoryResourceRecord,
  type MemoryStore,
  type MemoryTextChange,
  type MemoryWriter,
  memoryErrors,
  type NewMemoryBinding,
  type NewMemoryDocument,
  memoryRules as rules,
} from "@opencomputer/runtime";
import {
  type BindingRow,
  bindingFromRow,
  documentFromRow,
  type MemoryDocumentRow,
  type MemoryResourceRow,
  resourceFromRow,
  sameBindings,
} from "@opencomputer/sql-store";
import type pg from "pg";
import type { PostgresStore } from "./postgres-store.ts";

type Db = pg.Pool | pg.PoolClient;

const RESOURCE = `SELECT r.*, (SELECT count(*) FROM memory_documents d WHERE d.project_id = r.project_id
  AND d.environment = r.environment AND d.resource = r.id AND NOT d.deleted) AS documents
  FROM memory_resources r`;
const DOCUMENT = `SELECT d.*, r.max_bytes FROM memory_documents d JOIN memory_resources r
  ON r.project_id = d.project_id AND r.environment = d.environment AND r.id = d.resource`;
const WHERE_DOC = "d.project_id = $1 AND d.environment = $2 AND d.resource = $3 AND d.id = $4";
const WHERE_KEY = "project_id = $1 AND environment = $2 AND resource = $3 AND id = $4";

export class PostgresMemoryStore implements MemoryStore {
  private readonly pool: pg.Pool;

  constructor(store: PostgresStore) {
    this.pool = store.pool;
  }

  async putResource(
    projectId: string,
    environment: string,
    id: string,
    provider: MemoryProviderConfig,
    declared = true,
  ): Promise<MemoryResourceRecord> {
    rules.checkKey({ projectId, environment, resource: id });
    rules.checkProvider(provider);
    return this.transaction(async (tx) => {
      // One registration at a time per project environment, so the count below holds.
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [
        `memory:${projectId}`,
        environment,
      ]);
      const existing = await readResource(tx, projectId, environment, id);
      const now = isoNow();
      if (existing) {
        if (existing.provider.kind !== provider.kind) {
          throw memoryErrors.kindChanged(id, existing, provider);
        }
        if (existing.provider.maxBytes !== provider.maxBytes || (declared && !existing.declared)) {
          await tx.query(
            "UPDATE memory_resources SET max_bytes = $4, declared = declared OR $6, updated_at = $5 WHERE project_id = $1 AND environment = $2 AND id = $3",
            [projectId, environment, id, provider.maxBytes, now, declared],
          );
        }
      } else {
        const { rows } = await tx.query<{ n: string }>(
          "SELECT count(*) AS n FROM memory_resources WHERE project_id = $1 AND environment = $2",
          [projectId, environment],
        );
        if (Number(rows[0]!.n) >= rules.MEMORY_LIMITS.resourcesPerEnvironment) {
          throw memoryErrors.tooManyResources();
        }
        await tx.query(
          "INSERT INTO memory_resources (project_id, environment, id, kind, max_bytes, declared, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $7, $6, $6)",
          [projectId, environment, id, provider.kind, provider.maxBytes, now, declared],
        );
      }
      return (await readResource(tx, projectId, environment, id))!;
    });
  }

  getResource(projectId: string, environment: string, id: string) {
    return readResource(this.pool, projectId, environment, id);
  }

  async listResources(projectId: string, environment: string): Promise<MemoryResourceRecord[]> {
    const { rows } = await this.pool.query<MemoryResourceRow>(
      `${RESOURCE} WHERE r.project_id = $1 AND r.environment = $2 ORDER BY r.id`,
      [projectId, environment],
    );
    return rows.map(resourceFromRow);
  }

  async createDocument(key: MemoryKey, doc: NewMemoryDocument, writer: MemoryWriter) {
    rules.checkKey(key);
    return this.transaction(async (tx) => {
      const { rows } = await tx.query<MemoryResourceRow>(
        "SELECT *, 0 AS documents FROM memory_resources WHERE project_id = $1 AND environment = $2 AND id = $3 FOR UPDATE",
        [key.projectId, key.environment, key.resource],
      );
      if (!rows[0]) throw memoryErrors.noResource(key.resource);
      const clean = rules.checkNewDocument(doc, resourceFromRow(rows[0]).provider.maxBytes);
      if (await readDocument(tx, key, clean.id)) throw memoryErrors.idUsed(clean.id);
      const count = await tx.query<{ n: string }>(
        "SELECT count(*) AS n FROM memory_documents WHERE project_id = $1 AND environment = $2 AND resource = $3",
        [key.projectId, key.environment, key.resource],
      );
      if (Number(count.rows[0]!.n) >= rules.MEMORY_LIMITS.documentsPerResource) {
        throw memoryErrors.tooManyDocuments(key.resource);
      }
      await tx.query(
        `INSERT INTO memory_documents (project_id, environment, resource, id, title, text, summary,
          agent_writes, revision, bytes, writer, deleted, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10, false, $11)`,
        [
          key.projectId,
          key.environment,
          key.resource,
          clean.id,
          clean.title,
          clean.text,
          clean.summary,
          clean.agentWrites,
          Buffer.byteLength(clean.text, "utf8"),
          JSON.stringify(writer),
          isoNow(),
        ],
      );
      return (await readDocument(tx, key, clean.id))!;
    });
  }

  getDocument(key: MemoryKey, id: string) {
    return readDocument(this.pool, key, id);
  }

  async listDocuments(
    key: MemoryKey,
    page: { limit: number; cursor?: string },
  ): Promise<MemoryPage> {
    const limit = rules.clampLimit(page.limit);
    const after = page.cursor === undefined ? undefined : rules.decodeCursor(page.cursor);
    const base = `${DOCUMENT} WHERE d.project_id = $1 AND d.environment = $2 AND d.resource = $3 AND NOT d.deleted`;
    const params: unknown[] = [key.projectId, key.environment, key.resource];
    const sql = after
      ? `${base} AND (d.updated_at < $4 OR (d.updated_at = $4 AND d.id > $5)) ORDER BY d.updated_at DESC, d.id LIMIT $6`
      : `${base} ORDER BY d.updated_at DESC, d.id LIMIT $4`;
    if (after) params.push(after.updatedAt, after.id);
    params.push(limit + 1);
    const { rows } = await this.pool.query<MemoryDocumentRow>(sql, params);
    const documents = rows.slice(0, limit).map((row) => ({ ...documentFromRow(row), text: "" }));
    const last = documents[documents.length - 1];
    return {
      documents,
      nextCursor: rows.length > limit && last ? rules.encodeCursor(last.updatedAt, last.id) : null,
    };
  }

  async replaceDocument(
    key: MemoryKey,
    id: string,
    change: MemoryTextChange,
    expectRevision: string,
  ): Promise<MemoryDocumentRecord> {
    rules.checkKey(key);
    return this.transaction(async (tx) => {
      const doc = await mustCurrent(tx, key, id, expectRevision);
      const clean = rules.checkTextChange(change, doc.maxBytes);
      await writeText(tx, key, doc, clean, { kind: "owner" });
      return (await readDocument(tx, key, id))!;
    });
  }

  async patchDocument(key: MemoryKey, id: string, patch: MemoryPatch, expectRevision: string) {
    rules.checkKey(key);
    const clean = rules.checkPatch(patch);
    return this.transaction(async (tx) => {
      const doc = await mustCurrent(tx, key, id, expectRevision);
      await tx.query(
        `UPDATE memory_documents SET title = $5, agent_writes = $6, revision = revision + 1,
          updated_at = $7 WHERE ${WHERE_KEY}`,
        [
          key.projectId,
          key.environment,
          key.resource,
          id,
          clean.title ?? doc.title,
          clean.agentWrites ?? doc.agentWrites,
          isoNow(),
        ],
      );
      return (await readDocument(tx, key, id))!;
    });
  }

  async deleteDocument(key: MemoryKey, id: string, expectRevision: string): Promise<void> {
    rules.checkKey(key);
    await this.transaction(async (tx) => {
      await mustCurrent(tx, key, id, expectRevision);
      await tx.query(
        `UPDATE memory_documents SET title = '', text = '', summary = '', bytes = 0, deleted = true,
          revision = revision + 1, updated_at = $5 WHERE ${WHERE_KEY}`,
        [key.projectId, key.environment, key.resource, id, isoNow()],
      );
    });
  }

  async saveByAgent(
    sessionId: string,
    key: MemoryKey,
    id: string,
    change: MemoryTextChange,
    expectRevision: string,
  ): Promise<AgentSaveOutcome> {
    rules.checkKey(key);
    return this.transaction(async (tx): Promise<AgentSaveOutcome> => {
      // The binding row is locked too: a revocation waits for this save, or this save sees it.
      const { rows } = await tx.query<{ revoked_at: string | null }>(
        `SELECT revoked_at FROM memory_bindings WHERE session_id = $1 AND project_id = $2
          AND environment = $3 AND resource = $4 AND scope = 'document' AND doc_id = $5
          AND access = 'read-write' FOR UPDATE`,
        [sessionId, key.projectId, key.environment, key.resource, id],
      );
      if (!rows[0] || rows[0].revoked_at !== null) {
        return { status: "rejected", reason: "session_closed" };
      }
      const doc = await readDocument(tx, key, id, true);
      if (!doc || doc.deleted) return { status: "rejected", reason: "not_found" };
      if (doc.agentWrites === "disabled") {
        return { status: "rejected", reason: "agent_writes_disabled" };
      }
      const over = rules.oversized(change, doc.maxBytes);
      if (over) return { status: "rejected", reason: "too_large", ...over };
      if (doc.revision !== expectRevision) return { status: "conflict", document: doc };
      await writeText(tx, key, doc, change, { kind: "agent", sessionId });
      return { status: "saved", document: (await readDocument(tx, key, id))! };
    });
  }

  async bindSession(sessionId: string, bindings: readonly NewMemoryBinding[]): Promise<void> {
    rules.checkBindings(bindings);
    await this.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1), 0)", [`memory:${sessionId}`]);
      const existing = await bindingsOf(tx, sessionId);
      if (existing.length > 0) {
        if (!sameBindings(existing, bindings)) {
          throw new MemoryError(
            "conflict",
            `session ${sessionId} is already bound to other memory`,
            {
              path: "memory",
            },
          );
        }
        return;
      }
      for (const [position, b] of bindings.entries()) {
        await tx.query(
          `INSERT INTO memory_bindings (session_id, position, project_id, environment, resource,
            scope, doc_id, access, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)`,
          [sessionId, position, b.projectId, b.environment, b.resource, b.scope, b.id, b.access],
        );
      }
    });
  }

  sessionBindings(sessionId: string): Promise<MemoryBindingRecord[]> {
    return bindingsOf(this.pool, sessionId);
  }

  async revokeSession(sessionId: string): Promise<void> {
    await this.pool.query(
      "UPDATE memory_bindings SET revoked_at = $2 WHERE session_id = $1 AND revoked_at IS NULL",
      [sessionId, isoNow()],
    );
  }

  private async transaction<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    const tx = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await tx.query("BEGIN ISOLATION LEVEL READ COMMITTED");
      const result = await fn(tx);
      await tx.query("COMMIT");
      return result;
    } catch (error) {
      await tx.query("ROLLBACK").catch((e: Error) => {
        broken = e;
      });
      throw error;
    } finally {
      tx.release(broken);
    }
  }
}

export function createPostgresMemoryStore(store: PostgresStore): PostgresMemoryStore {
  return new PostgresMemoryStore(store);
}

async function readResource(db: Db, projectId: string, environment: string, id: string) {
  const { rows } = await db.query<MemoryResourceRow>(
    `${RESOURCE} WHERE r.project_id = $1 AND r.environment = $2 AND r.id = $3`,
    [projectId, environment, id],
  );
  return rows[0] ? resourceFromRow(rows[0]) : undefined;
}

async function readDocument(db: Db, key: MemoryKey, id: string, lock = false) {
  const { rows } = await db.query<MemoryDocumentRow>(
    `${DOCUMENT} WHERE ${WHERE_DOC}${lock ? " FOR UPDATE OF d" : ""}`,
    [key.projectId, key.environment, key.resource, id],
  );
  return rows[0] ? documentFromRow(rows[0]) : undefined;
}

async function mustCurrent(tx: pg.PoolClient, key: MemoryKey, id: string, expectRevision: string) {
  rules.checkDocumentId(id);
  const doc = await readDocument(tx, key, id, true);
  if (!doc || doc.deleted) throw memoryErrors.noDocument(key.resource, id);
  if (doc.revision !== expectRevision) throw memoryErrors.staleRevision(id, doc.revision);
  return doc;
}

async function writeText(
  tx: pg.PoolClient,
  key: MemoryKey,
  doc: MemoryDocumentRecord,
  change: MemoryTextChange,
  writer: MemoryWriter,
): Promise<void> {
  await tx.query(
    `UPDATE memory_documents SET text = $5, summary = $6, bytes = $7, writer = $8,
      revision = revision + 1, updated_at = $9 WHERE ${WHERE_KEY}`,
    [
      key.projectId,
      key.environment,
      key.resource,
      doc.id,
      change.text,
      change.summary ?? doc.summary,
      Buffer.byteLength(change.text, "utf8"),
      JSON.stringify(writer),
      isoNow(),
    ],
  );
}

async function bindingsOf(db: Db, sessionId: string): Promise<MemoryBindingRecord[]> {
  const { rows } = await db.query<BindingRow>(
    "SELECT * FROM memory_bindings WHERE session_id = $1 ORDER BY position",
    [sessionId],
  );
  return rows.map(bindingFromRow);
}
